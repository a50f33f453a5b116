#include "gpusched/app/serve_command.h"

#include <algorithm>
#include <memory>

#include <spdlog/spdlog.h>

#include "gpusched/app/command_line.h"
#include "gpusched/app/process_setup.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/signal_shutdown.h"
#include "gpusched/util/quantity.h"

namespace gpusched {
namespace {

// A route verb is one path segment: not empty, no '/', nothing but printable ASCII without space.
bool IsVerb(const std::string& verb) {
  return !verb.empty() && std::all_of(verb.begin(), verb.end(),
                                      [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

// Splits HOST:PORT into `o`; false (with `error` naming `flag`) when malformed.
bool ParseListen(const std::string& flag, const std::string& listen, ServerOptions& o,
                 std::string& error) {
  auto address = ParseHostPort(listen);
  if (!address) {
    error = "--" + flag + " must be HOST:PORT, got \"" + listen + "\"";
    return false;
  }
  o.host = std::move(address->host);
  o.port = address->port;
  return true;
}

std::optional<ServerOptions> ServerOptionsFrom(const FlagSet& f, std::string& error) {
  ServerOptions o;
  if (!ParseListen("listen", f.Get("listen"), o, error)) return std::nullopt;
  o.url_prefix = f.Get("url-prefix");
  o.filter_verb = f.Get("filter-verb");
  o.prioritize_verb = f.Get("prioritize-verb");
  if (!IsVerb(o.filter_verb) || !IsVerb(o.prioritize_verb)) {
    error = "--filter-verb and --prioritize-verb must be single path segments (no '/' or spaces)";
    return std::nullopt;
  }
  if (o.filter_verb == o.prioritize_verb) {
    error = "--filter-verb and --prioritize-verb must differ";
    return std::nullopt;
  }
  // Quantities saturate (1e309 reads as the int64 maximum): bound them, or that means no limit.
  constexpr int64_t kMaxBodyMilli = (int64_t{4} << 30) * 1000;
  auto body = ParseQuantityMilli(f.Get("max-body-bytes"));
  if (!body || *body < 1000 || *body > kMaxBodyMilli) {
    error = "--max-body-bytes must be a quantity from 1 to 4Gi, such as 64Mi";
    return std::nullopt;
  }
  o.limits.max_body_bytes = static_cast<size_t>(MilliToUnitsCeil(*body));
  constexpr int64_t kMaxInflightMilli = (int64_t{64} << 30) * 1000;
  auto inflight = ParseQuantityMilli(f.Get("max-inflight-body-bytes"));
  // Below 64Ki a few headers would fill it.
  if (!inflight || *inflight < (int64_t{64} << 10) * 1000 || *inflight > kMaxInflightMilli) {
    error = "--max-inflight-body-bytes must be a quantity from 64Ki to 64Gi, such as 256Mi";
    return std::nullopt;
  }
  o.max_inflight_bytes = static_cast<size_t>(MilliToUnitsCeil(*inflight));
  // A body the budget could never hold is too large (413), not a reason to retry later (503).
  if (o.limits.max_body_bytes > o.max_inflight_bytes) {
    o.limits.max_body_bytes = o.max_inflight_bytes;
    spdlog::warn(
        "--max-body-bytes is over --max-inflight-body-bytes: bodies are limited to {} bytes",
        o.limits.max_body_bytes);
  }
  auto threads = ParseWholeNumber(f.Get("threads"), 1, 1024);
  auto keep_alive = ParseWholeNumber(f.Get("keep-alive-timeout"), 1, 86400);
  if (!threads || !keep_alive) {
    error = "--threads and --keep-alive-timeout take positive whole numbers";
    return std::nullopt;
  }
  o.threads = static_cast<int>(*threads);
  o.keep_alive = std::chrono::seconds(*keep_alive);
  auto request_timeout = ParseWholeNumber(f.Get("request-timeout"), 1, 3600);
  auto max_connections = ParseWholeNumber(f.Get("max-connections"), 16, 1 << 20);
  if (!request_timeout || !max_connections) {
    error = "--request-timeout takes whole seconds (1-3600), --max-connections 16 to 1048576";
    return std::nullopt;
  }
  o.request_timeout = std::chrono::seconds(*request_timeout);
  auto not_ready_wait = ParseWholeNumber(f.Get("not-ready-wait"), 0, 10000);
  if (!not_ready_wait) {
    error = "--not-ready-wait takes whole milliseconds (0-10000)";
    return std::nullopt;
  }
  o.not_ready_wait = std::chrono::milliseconds(*not_ready_wait);
  o.max_connections = static_cast<size_t>(*max_connections);
  o.tls = TlsFiles{f.Get("tls-cert"), f.Get("tls-key"), f.Get("client-ca")};
  if (o.tls.cert.empty() != o.tls.key.empty()) {
    error = "--tls-cert and --tls-key go together";
    return std::nullopt;
  }
  if (!o.tls.client_ca.empty() && o.tls.cert.empty()) {
    error = "--client-ca needs --tls-cert and --tls-key";
    return std::nullopt;
  }
  auto tls_reload = ParseWholeNumber(f.Get("tls-reload-interval"), 1, 86400);
  if (!tls_reload) {
    error = "--tls-reload-interval takes a whole number of seconds";
    return std::nullopt;
  }
  o.tls_reload_interval = std::chrono::seconds(*tls_reload);
  return o;
}

// The plain-HTTP listener of `flag` (--ops-listen, --reports-listen), if any: bodiless GET routes
// only.
std::optional<ServerOptions> SideOptionsFrom(const FlagSet& f, const std::string& flag,
                                             const ServerOptions& main, std::string& error) {
  if (f.Get(flag).empty()) return std::nullopt;
  ServerOptions o;
  o.serve_verbs = false;
  // Two threads for /metrics and the reports at most, one always free for the probes.
  o.threads = 3;
  o.max_concurrent_reports = 2;
  // Its routes take no body. A budget of its own, for its answers waiting for slow readers: the
  // verbs' traffic can never fail the probes, nor scrapers the verbs.
  o.limits.max_body_bytes = 64 << 10;
  o.max_inflight_bytes = 64 << 20;
  o.keep_alive = main.keep_alive;
  o.request_timeout = main.request_timeout;
  o.max_connections = main.max_connections;
  if (!ParseListen(flag, f.Get(flag), o, error)) return std::nullopt;
  return o;
}

}  // namespace

FlagSet ServeCommandOptions::Flags() {
  FlagSet f(
      "gpusched serve", "gpusched serve [flags]",
      "Serves the kube-scheduler extender API (filter, prioritize) over HTTP for the GPUs of an\n"
      "inventory: the file named by --cluster, or the bundled sample cluster.");
  f.Add({"listen", "HOST:PORT", "127.0.0.1:8888", "address to listen on"})
      .Add({"kubeconfig", "FILE", "",
            "watch nodes and pods through the API server of this "
            "kubeconfig (inside a pod the service account is used "
            "without this flag)"})
      .Add({"context", "NAME", "", "kubeconfig context; default: its current-context"})
      .Add({"cluster", "FILE", "",
            "static inventory instead of the API server: Nodes and Pods as "
            "YAML or JSON (a v1.List, or kubectl get nodes,pods -A -o yaml "
            "output); default without an API server: the bundled sample "
            "cluster"})
      .Add({"allow-empty-inventory", "", "false",
            "start even when --cluster holds no Node (otherwise an error, as a wrong file is "
            "the likelier cause)"})
      .Add({"url-prefix", "PATH", "",
            "path before the verbs; match the urlPrefix path of the "
            "KubeSchedulerConfiguration extender"})
      .Add({"filter-verb", "VERB", "filter",
            "route of the filter call: POST <url-prefix>/<VERB>; one path segment"})
      .Add({"prioritize-verb", "VERB", "prioritize",
            "route of the prioritize call: POST <url-prefix>/<VERB>; one path segment, not the "
            "filter verb"})
      .Add({"max-body-bytes", "QUANTITY", "64Mi",
            "largest request body accepted (at most 4Gi), counted after chunked decoding; larger "
            "ones get HTTP 413 and are read no further; lowered to --max-inflight-body-bytes "
            "when over it"})
      .Add({"max-inflight-body-bytes", "QUANTITY", "256Mi",
            "request bytes held at once across all connections past each request's first 4Ki "
            "(headers; bodies as they arrive, or whole once Content-Length announces them); a "
            "request that would pass it gets HTTP 503 and its connection is closed; requests "
            "over 1Mi may not take the last eighth (less as one body of --max-body-bytes needs), "
            "kept for probes and small requests"})
      .Add({"threads", "N", "8",
            "HTTP worker threads; a thread serves one request at a time, idle connections hold "
            "none"})
      .Add({"keep-alive-timeout", "SECONDS", "150",
            "idle keep-alive connections are closed after this; keep above kube-scheduler's 90"})
      .Add({"request-timeout", "SECONDS", "10",
            "a request (TLS handshake included) must arrive whole within this of its first "
            "byte, and its answer be taken within it; else the connection is closed"})
      .Add({"not-ready-wait", "MILLISECONDS", "1000",
            "a filter call that arrives while the inventory's first lists are on their way "
            "waits up to this for them before answering 503 (prioritize answers at once); keep "
            "below the filter entry's httpTimeout"})
      .Add({"max-connections", "N", "10000",
            "open connections at most (also bounded by the open-file limit); beyond it the "
            "longest-idle connection is closed for a new one"})
      .Add({"assume-ttl", "SECONDS", "30",
            "with --kubeconfig or in a cluster: how long a pod counts on the node gpusched "
            "expects it bound to (its best-ranked) before the watch confirms it; 0 disables"})
      .Add({"workload-half-life", "SECONDS", "3600",
            "with --kubeconfig or in a cluster: half-life of the observed pod shapes in the "
            "target workload fragmentation is measured against"})
      .Add({"dra-inventory", "BOOL", "true",
            "with --kubeconfig or in a cluster: list and watch resourceslices, resourceclaims "
            "and deviceclasses (resource.k8s.io/v1, Kubernetes 1.34+), so GPUs published as DRA "
            "devices count and pods' claims are placed; false on older control planes, which "
            "serve none of them"})
      .Add({"policy", "FILE", "",
            "scheduling policy (YAML); reloaded when the file changes; "
            "default: the built-in default policy"})
      .Add({"policy-reload-interval", "SECONDS", "2", "how often the policy file is checked"})
      .Add({"log-level", "LEVEL", "info",
            "trace, debug, info, warn, error or off; debug logs one "
            "line per decision"})
      .Add({"log-format", "FORMAT", "text",
            "text (control characters in messages escaped), or json for one JSON object per line"})
      .Add({"tls-cert", "FILE", "",
            "serve HTTPS with this PEM certificate (and chain); re-read "
            "when the file changes"})
      .Add({"tls-key", "FILE", "", "PEM private key of --tls-cert"})
      .Add({"client-ca", "FILE", "",
            "require a client certificate signed by this PEM CA bundle "
            "(mutual TLS, so only kube-scheduler may call); needs "
            "--tls-cert"})
      .Add({"tls-reload-interval", "SECONDS", "10", "how often the TLS files are checked"})
      .Add({"ops-listen", "HOST:PORT", "",
            "also serve /healthz, /readyz, /metrics, /capacity and /why-pending over plain "
            "HTTP here (for probes and Prometheus when the main "
            "listener requires client certificates); /metrics and the reports are built at "
            "most two at a time, so the probes always find a thread"})
      .Add({"report-interval", "SECONDS", "30",
            "with --ops-listen or --reports-listen: /capacity, /why-pending and their gauges are "
            "computed again at most this often, when the inventory or the policy changed"})
      .Add({"reports-listen", "HOST:PORT", "",
            "serve /capacity and /why-pending (which name the cluster's pods and namespaces) "
            "over plain HTTP here instead of on --ops-listen, so that a NetworkPolicy can admit "
            "Prometheus to the ops port and nobody to this one (kubectl port-forward still "
            "reaches it)"});
  return f;
}

std::optional<ServeCommandOptions> ServeCommandOptions::FromFlags(const FlagSet& flags,
                                                                  std::string& error) {
  if (!NoArguments(flags, "serve", error)) return std::nullopt;
  ServeCommandOptions o;
  o.log_level = spdlog::level::from_str(flags.Get("log-level"));
  if (o.log_level == spdlog::level::off && flags.Get("log-level") != "off") {
    error = "unknown --log-level " + flags.Get("log-level");
    return std::nullopt;
  }
  auto log_format = ParseLogFormat(flags.Get("log-format"));
  if (!log_format) {
    error = "--log-format must be text or json";
    return std::nullopt;
  }
  o.log_format = *log_format;
  auto server = ServerOptionsFrom(flags, error);
  if (!server) return std::nullopt;
  o.app.server = *server;
  o.app.ops = SideOptionsFrom(flags, "ops-listen", o.app.server, error);
  if (!error.empty()) return std::nullopt;
  o.app.reports = SideOptionsFrom(flags, "reports-listen", o.app.server, error);
  if (!error.empty()) return std::nullopt;
  o.app.policy_path = flags.Get("policy");
  auto reload_seconds = ParseWholeNumber(flags.Get("policy-reload-interval"), 1, 3600);
  if (!reload_seconds) {
    error = "--policy-reload-interval takes a whole number of seconds";
    return std::nullopt;
  }
  o.app.policy_reload_interval = std::chrono::seconds(*reload_seconds);
  auto report_seconds = ParseWholeNumber(flags.Get("report-interval"), 1, 3600);
  if (!report_seconds) {
    error = "--report-interval takes a whole number of seconds within 1..3600";
    return std::nullopt;
  }
  o.app.capacity_interval = std::chrono::seconds(*report_seconds);
  auto assume_ttl = ParseWholeNumber(flags.Get("assume-ttl"), 0, 3600);
  if (!assume_ttl) {
    error = "--assume-ttl takes a whole number of seconds within 0..3600";
    return std::nullopt;
  }
  auto half_life = ParseWholeNumber(flags.Get("workload-half-life"), 1, 30 * 86400);
  if (!half_life) {
    error = "--workload-half-life takes a whole number of seconds within 1..2592000";
    return std::nullopt;
  }
  o.live.assume_ttl = std::chrono::seconds(*assume_ttl);
  o.live.workload_half_life = std::chrono::seconds(*half_life);
  auto dra = ParseBool(flags.Get("dra-inventory"));
  if (!dra) {
    error = "--dra-inventory must be true or false";
    return std::nullopt;
  }
  o.live.dra = *dra;
  o.inventory = InventoryChoice{flags.Get("cluster"), flags.Get("kubeconfig"), flags.Get("context"),
                                flags.Get("allow-empty-inventory") == "true"};
  return o;
}

int RunServeCommand(const std::vector<std::string>& args) {
  SetUpServingProcess();
  FlagSet flags = ServeCommandOptions::Flags();
  if (auto done = ParseOrHelp(flags, args)) return *done;
  std::string error;
  auto options = ServeCommandOptions::FromFlags(flags, error);
  if (!options) return Fail(error);
  ConfigureLogging(options->log_format, options->log_level);
  const ServerAppOptions& app_options = options->app;

  // Before any other thread starts (they inherit its signal mask).
  SignalShutdown shutdown(std::chrono::seconds(3));

  std::shared_ptr<const Policy> policy = PolicyFromFlag(app_options.policy_path);
  if (!policy) return Fail("invalid policy " + app_options.policy_path);
  if (!app_options.policy_path.empty()) {
    spdlog::info("policy {} loaded: digest {}", app_options.policy_path, policy->digest());
  }
  auto inventory = MakeInventorySource(
      options->inventory, GpuResourceNames(policy->spec().gpu_resources), options->live, error);
  if (!inventory) return Fail(error);
  std::unique_ptr<ServerApp> app;
  int port = 0;
  try {
    app = std::make_unique<ServerApp>(app_options, policy, std::move(inventory));
    port = app->Bind();
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
  if (app_options.ops) {
    spdlog::info("serving /healthz, /readyz, /metrics{} on http://{}:{}",
                 app_options.reports ? "" : ", /capacity and /why-pending", app_options.ops->host,
                 app->ops_port());
  }
  if (app_options.reports) {
    spdlog::info("serving /capacity and /why-pending on http://{}:{}", app_options.reports->host,
                 app->reports_port());
  }
  shutdown.Serving([&] { app->Stop(); });
  const ServerOptions& o = app_options.server;
  std::string prefix = o.url_prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  spdlog::info("gpusched {} serving {}://{}:{}{}/{{{},{}}} from {}{}", GPUSCHED_VERSION,
               o.tls.cert.empty() ? "http" : "https", o.host, port, prefix, o.filter_verb,
               o.prioritize_verb, app->inventory().description(),
               o.tls.client_ca.empty() ? "" : " (client certificates required)");
  app->Run();
  shutdown.Finish();  // Run() also returns when the listener fails
  return 0;
}

}  // namespace gpusched
