#include "gpusched/app/serve_command.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "gpusched/app/command_line.h"
#include "gpusched/app/inventory_choice.h"
#include "gpusched/app/inventory_source.h"
#include "gpusched/app/placeholder_controller.h"
#include "gpusched/app/process_setup.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/signal_shutdown.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/util/input_error.h"
#include "gpusched/util/quantity.h"

namespace gpusched {
namespace {

// This replica's name in the placeholders' Lease: its pod's name (the Deployment passes POD_NAME)
// or host name, and a random part, so a restarted container never takes its predecessor's place.
std::string ReplicaIdentity() {
  const char* pod = std::getenv("POD_NAME");
  std::string name = pod && *pod ? pod : "";
  if (name.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) name = host;
  }
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x", static_cast<unsigned>(random()));
  return name.substr(0, 200) + suffix;
}

// A route verb is one path segment: not empty, no '/', nothing but printable ASCII without space.
bool IsVerb(const std::string& verb) {
  return !verb.empty() && std::all_of(verb.begin(), verb.end(),
                                      [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

// Splits HOST:PORT into `o`; a problem (naming `flag`) when malformed.
void ReadListen(const std::string& flag, const std::string& listen, ServerOptions& o,
                Problems& problems) {
  auto address = ParseHostPort(listen);
  if (!address) {
    problems.Add("--" + flag + " must be HOST:PORT, got \"" + listen + "\"");
    return;
  }
  o.host = std::move(address->host);
  o.port = address->port;
}

// --max-body-bytes and --max-inflight-body-bytes into `o`.
void ReadBodyLimits(const FlagSet& f, ServerOptions& o, Problems& problems) {
  // Quantities saturate (1e309 reads as the int64 maximum): bound them, or that means no limit.
  constexpr int64_t kMaxBodyMilli = (int64_t{4} << 30) * 1000;
  auto body = ParseQuantityMilli(f.Get("max-body-bytes"));
  if (!body || *body < 1000 || *body > kMaxBodyMilli) {
    problems.Add("--max-body-bytes must be a quantity from 1 to 4Gi, such as 64Mi");
  } else {
    o.limits.max_body_bytes = static_cast<size_t>(MilliToUnitsCeil(*body));
  }
  constexpr int64_t kMaxInflightMilli = (int64_t{64} << 30) * 1000;
  auto inflight = ParseQuantityMilli(f.Get("max-inflight-body-bytes"));
  // Below 64Ki a few headers would fill it.
  if (!inflight || *inflight < (int64_t{64} << 10) * 1000 || *inflight > kMaxInflightMilli) {
    problems.Add("--max-inflight-body-bytes must be a quantity from 64Ki to 64Gi, such as 256Mi");
    return;
  }
  o.max_inflight_bytes = static_cast<size_t>(MilliToUnitsCeil(*inflight));
  // A body the budget could never hold is too large (413), not a reason to retry later (503).
  if (body && o.limits.max_body_bytes > o.max_inflight_bytes) {
    o.limits.max_body_bytes = o.max_inflight_bytes;
    spdlog::warn(
        "--max-body-bytes is over --max-inflight-body-bytes: bodies are limited to {} bytes",
        o.limits.max_body_bytes);
  }
}

// --threads, --keep-alive-timeout, --request-timeout, --max-connections and --not-ready-wait.
void ReadConnectionLimits(const FlagSet& f, ServerOptions& o, Problems& problems) {
  auto threads = ParseWholeNumber(f.Get("threads"), 1, 1024);
  auto keep_alive = ParseWholeNumber(f.Get("keep-alive-timeout"), 1, 86400);
  if (!threads || !keep_alive) {
    problems.Add("--threads and --keep-alive-timeout take positive whole numbers");
  } else {
    o.threads = static_cast<int>(*threads);
    o.keep_alive = std::chrono::seconds(*keep_alive);
  }
  auto request_timeout = ParseWholeNumber(f.Get("request-timeout"), 1, 3600);
  auto max_connections = ParseWholeNumber(f.Get("max-connections"), 16, 1 << 20);
  if (!request_timeout || !max_connections) {
    problems.Add("--request-timeout takes whole seconds (1-3600), --max-connections 16 to 1048576");
  } else {
    o.request_timeout = std::chrono::seconds(*request_timeout);
    o.max_connections = static_cast<size_t>(*max_connections);
  }
  if (auto not_ready_wait = ParseWholeNumber(f.Get("not-ready-wait"), 0, 10000)) {
    o.not_ready_wait = std::chrono::milliseconds(*not_ready_wait);
  } else {
    problems.Add("--not-ready-wait takes whole milliseconds (0-10000)");
  }
}

// --tls-cert, --tls-key, --client-ca and --tls-reload-interval.
void ReadTls(const FlagSet& f, ServerOptions& o, Problems& problems) {
  o.tls = TlsFiles{f.Get("tls-cert"), f.Get("tls-key"), f.Get("client-ca")};
  if (o.tls.cert.empty() != o.tls.key.empty()) {
    problems.Add("--tls-cert and --tls-key go together");
  } else if (!o.tls.client_ca.empty() && o.tls.cert.empty()) {
    problems.Add("--client-ca needs --tls-cert and --tls-key");
  }
  if (auto tls_reload = ParseWholeNumber(f.Get("tls-reload-interval"), 1, 86400)) {
    o.tls_reload_interval = std::chrono::seconds(*tls_reload);
  } else {
    problems.Add("--tls-reload-interval takes a whole number of seconds");
  }
}

// The verbs' listener.
Validated<ServerOptions> ServerOptionsFrom(const FlagSet& f) {
  Validated<ServerOptions> out;
  ServerOptions& o = out.value;
  ReadListen("listen", f.Get("listen"), o, out.problems);
  o.url_prefix = f.Get("url-prefix");
  o.filter_verb = f.Get("filter-verb");
  o.prioritize_verb = f.Get("prioritize-verb");
  if (!IsVerb(o.filter_verb) || !IsVerb(o.prioritize_verb)) {
    out.problems.Add(
        "--filter-verb and --prioritize-verb must be single path segments (no '/' or spaces)");
  } else if (o.filter_verb == o.prioritize_verb) {
    out.problems.Add("--filter-verb and --prioritize-verb must differ");
  }
  ReadBodyLimits(f, o, out.problems);
  ReadConnectionLimits(f, o, out.problems);
  ReadTls(f, o, out.problems);
  return out;
}

// A listener beside the verbs' (no verbs), with the verbs' listener's connection limits and
// timeouts.
ServerOptions SideListenerOf(const ServerOptions& main) {
  ServerOptions o;
  o.serve_verbs = false;
  o.keep_alive = main.keep_alive;
  o.request_timeout = main.request_timeout;
  o.max_connections = main.max_connections;
  o.tls_reload_interval = main.tls_reload_interval;
  return o;
}

// The plain-HTTP listener of `flag` (--ops-listen, --reports-listen): bodiless GET routes only;
// nullopt when the flag is not given.
Validated<std::optional<ServerOptions>> SideOptionsFrom(const FlagSet& f, const std::string& flag,
                                                        const ServerOptions& main) {
  Validated<std::optional<ServerOptions>> out;
  if (f.Get(flag).empty()) return out;
  ServerOptions o = SideListenerOf(main);
  // Two threads for /metrics and the reports at most, one always free for the probes.
  o.threads = 3;
  o.max_concurrent_reports = 2;
  // Its routes take no body. A budget of its own, for its answers waiting for slow readers: the
  // verbs' traffic can never fail the probes, nor scrapers the verbs.
  o.limits.max_body_bytes = 64 << 10;
  o.max_inflight_bytes = 64 << 20;
  ReadListen(flag, f.Get(flag), o, out.problems);
  out.value = std::move(o);
  return out;
}

// The admission webhook's HTTPS listener; nullopt without --webhook-listen.
Validated<std::optional<ServerOptions>> WebhookOptionsFrom(const FlagSet& f,
                                                           const ServerOptions& main) {
  Validated<std::optional<ServerOptions>> out;
  bool any_tls = !f.Get("webhook-tls-cert").empty() || !f.Get("webhook-tls-key").empty();
  if (f.Get("webhook-listen").empty()) {
    if (any_tls) out.problems.Add("--webhook-tls-cert and --webhook-tls-key need --webhook-listen");
    return out;
  }
  ServerOptions o = SideListenerOf(main);
  o.threads = 4;
  // An AdmissionReview carries the pod (Kubernetes stores objects up to 1.5 MiB) and, on updates,
  // its old copy.
  o.limits.max_body_bytes = 8 << 20;
  o.max_inflight_bytes = 64 << 20;
  o.tls = TlsFiles{f.Get("webhook-tls-cert"), f.Get("webhook-tls-key"), ""};
  if (o.tls.cert.empty() || o.tls.key.empty()) {
    out.problems.Add(
        "--webhook-listen needs --webhook-tls-cert and --webhook-tls-key: the API server calls "
        "webhooks over HTTPS only");
  }
  ReadListen("webhook-listen", f.Get("webhook-listen"), o, out.problems);
  out.value = std::move(o);
  return out;
}

// A whole number of seconds in [min, max] from `flag`; `problem` when it is not.
std::chrono::seconds ReadSeconds(const FlagSet& f, const std::string& flag, int64_t min,
                                 int64_t max, const std::string& problem, Problems& problems) {
  auto seconds = ParseWholeNumber(f.Get(flag), min, max);
  if (!seconds) problems.Add(problem);
  return std::chrono::seconds(seconds.value_or(0));
}

}  // namespace

FlagSet ServeCommandOptions::Flags() {
  // Longer than 100 lines: a table of serve's flags, one entry each, read top to bottom as --help
  // prints them; splitting it would only scatter the table.
  FlagSet f(
      "gpusched serve", "gpusched serve [flags]",
      "Serves the kube-scheduler extender API (filter, prioritize) over HTTP for the GPUs of an\n"
      "inventory: the file named by --cluster, or the bundled sample cluster.");
  f.AddTable(R"(
--listen HOST:PORT = 127.0.0.1:8888
    address to listen on
)");
  InventoryChoice::AddFlags(f, InventoryUse::kWatch);
  f.AddTable(R"(
--url-prefix PATH
    path before the verbs; match the urlPrefix path of the KubeSchedulerConfiguration extender
--filter-verb VERB = filter
    route of the filter call: POST <url-prefix>/<VERB>; one path segment
--prioritize-verb VERB = prioritize
    route of the prioritize call: POST <url-prefix>/<VERB>; one path segment, not the filter verb
--max-body-bytes QUANTITY = 64Mi
    largest request body accepted (at most 4Gi), counted after chunked decoding; larger ones get
    HTTP 413 and are read no further; lowered to --max-inflight-body-bytes when over it
--max-inflight-body-bytes QUANTITY = 256Mi
    request bytes held at once across all connections past each request's first 4Ki (headers;
    bodies as they arrive, or whole once Content-Length announces them); a request that would pass
    it gets HTTP 503 and its connection is closed; requests over 1Mi may not take the last eighth
    (less as one body of --max-body-bytes needs), kept for probes and small requests
--threads N = 8
    HTTP worker threads; a thread serves one request at a time, idle connections hold none
--keep-alive-timeout SECONDS = 150
    idle keep-alive connections are closed after this; keep above kube-scheduler's 90
--request-timeout SECONDS = 10
    a request (TLS handshake included) must arrive whole within this of its first byte, and its
    answer be taken within it; else the connection is closed
--not-ready-wait MILLISECONDS = 1000
    a filter call that arrives while the inventory's first lists are on their way waits up to this
    for them before answering 503 (prioritize answers at once); keep below the filter entry's
    httpTimeout
--max-connections N = 10000
    open connections at most (also bounded by the open-file limit); beyond it the longest-idle
    connection is closed for a new one
--assume-ttl SECONDS = 30
    with --kubeconfig or in a cluster: how long a pod counts on the node gpusched expects it bound
    to (its best-ranked) before the watch confirms it; 0 disables
--workload-half-life SECONDS = 3600
    with --kubeconfig or in a cluster: half-life of the observed pod shapes in the target workload
    fragmentation is measured against
--placeholders BOOL = false
    with --kubeconfig or in a cluster: create placeholder pods for pending GPU pods that only
    gpusched refuses, so cluster-autoscaler and Karpenter add a node for them
    (manifests/autoscaling/; the policy's autoscaling.placeholders); one replica writes, the holder
    of the Lease gpusched-placeholders
--placeholder-namespace NAMESPACE
    namespace of the placeholders' Lease; empty: $POD_NAMESPACE, else gpusched
--watch-list BOOL = true
    with --kubeconfig or in a cluster: make each initial sync one watch stream (sendInitialEvents,
    as client-go's informers do) where the API server offers it; a server that does not is listed
    in pages, as with false
--dra-inventory BOOL = true
    with --kubeconfig or in a cluster: list and watch resourceslices, resourceclaims and
    deviceclasses (resource.k8s.io/v1, Kubernetes 1.34+), so GPUs published as DRA devices count
    and pods' claims are placed; false on older control planes, which serve none of them
--group-size-inventory BOOL = true
    with --kubeconfig or in a cluster: list and watch the objects that state a pod group's size
    (batch/v1 jobs; podgroups and workloads of scheduling.k8s.io, scheduling.volcano.sh,
    scheduling.run.ai and scheduling.x-k8s.io), so a job whose pods state no size is placed whole;
    kinds the cluster does not serve are retried quietly
--policy FILE
    scheduling policy (YAML); reloaded when the file changes; default: the built-in default policy
--policy-reload-interval SECONDS = 2
    how often the policy file is checked
--log-level LEVEL = info
    trace, debug, info, warn, error or off; debug logs one line per decision
--log-format FORMAT = text
    text (control characters in messages escaped), or json for one JSON object per line
--tls-cert FILE
    serve HTTPS with this PEM certificate (and chain); re-read when the file changes
--tls-key FILE
    PEM private key of --tls-cert
--client-ca FILE
    require a client certificate signed by this PEM CA bundle (mutual TLS, so only kube-scheduler
    may call); needs --tls-cert
--tls-reload-interval SECONDS = 10
    how often the TLS files are checked
--ops-listen HOST:PORT
    also serve /healthz, /readyz, /metrics, /capacity and /why-pending over plain HTTP here (for
    probes and Prometheus when the main listener requires client certificates); /metrics and the
    reports are built at most two at a time, so the probes always find a thread
--report-interval SECONDS = 30
    with --ops-listen or --reports-listen: /capacity, /why-pending and their gauges are computed
    again at most this often, when the inventory or the policy changed
--reports-listen HOST:PORT
    serve /capacity and /why-pending (which name the cluster's pods and namespaces) over plain HTTP
    here instead of on --ops-listen, so that a NetworkPolicy can admit Prometheus to the ops port
    and nobody to this one (kubectl port-forward still reaches it)
--webhook-listen HOST:PORT
    serve the mutating admission webhook (POST /mutate-pods) over HTTPS here: it writes each GPU
    pod's hard rules into its required node affinity, so cluster-autoscaler and Karpenter see them
    (manifests/autoscaling/); needs --webhook-tls-cert and --webhook-tls-key
--webhook-tls-cert FILE
    PEM certificate (and chain) of the webhook listener; re-read when the file changes
--webhook-tls-key FILE
    PEM private key of --webhook-tls-cert
)");
  return f;
}

Validated<ServeCommandOptions> ServeCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<ServeCommandOptions> out;
  Problems& problems = out.problems;
  ServeCommandOptions& o = out.value;
  CheckNoArguments(flags, "serve", problems);
  o.log_level = spdlog::level::from_str(flags.Get("log-level"));
  if (o.log_level == spdlog::level::off && flags.Get("log-level") != "off") {
    problems.Add("unknown --log-level " + flags.Get("log-level"));
  }
  if (auto log_format = ParseLogFormat(flags.Get("log-format"))) {
    o.log_format = *log_format;
  } else {
    problems.Add("--log-format must be text or json");
  }
  o.app.server = problems.Take(ServerOptionsFrom(flags));
  o.app.ops = problems.Take(SideOptionsFrom(flags, "ops-listen", o.app.server));
  o.app.reports = problems.Take(SideOptionsFrom(flags, "reports-listen", o.app.server));
  o.app.webhook = problems.Take(WebhookOptionsFrom(flags, o.app.server));
  o.app.policy_path = flags.Get("policy");
  o.app.policy_reload_interval =
      ReadSeconds(flags, "policy-reload-interval", 1, 3600,
                  "--policy-reload-interval takes a whole number of seconds", problems);
  o.app.report_interval =
      ReadSeconds(flags, "report-interval", 1, 3600,
                  "--report-interval takes a whole number of seconds within 1..3600", problems);
  o.live.assume_ttl =
      ReadSeconds(flags, "assume-ttl", 0, 3600,
                  "--assume-ttl takes a whole number of seconds within 0..3600", problems);
  o.live.workload_half_life = ReadSeconds(
      flags, "workload-half-life", 1, 30 * 86400,
      "--workload-half-life takes a whole number of seconds within 1..2592000", problems);
  if (auto watch_list = ParseBool(flags.Get("watch-list"))) {
    o.live.reflector.watch_list = *watch_list;
  } else {
    problems.Add("--watch-list must be true or false");
  }
  if (auto dra = ParseBool(flags.Get("dra-inventory"))) {
    o.live.dra = *dra;
  } else {
    problems.Add("--dra-inventory must be true or false");
  }
  if (auto group_sizes = ParseBool(flags.Get("group-size-inventory"))) {
    o.live.group_sizes = *group_sizes;
  } else {
    problems.Add("--group-size-inventory must be true or false");
  }
  if (auto placeholders = ParseBool(flags.Get("placeholders"))) {
    o.placeholders = *placeholders;
  } else {
    problems.Add("--placeholders must be true or false");
  }
  o.placeholder_namespace = flags.Get("placeholder-namespace");
  if (o.placeholder_namespace.empty()) {
    const char* env = std::getenv("POD_NAMESPACE");
    o.placeholder_namespace = env && *env ? env : "gpusched";
  }
  if (!IsDnsSubdomain(o.placeholder_namespace) || o.placeholder_namespace.size() > 63 ||
      o.placeholder_namespace.find('.') != std::string::npos) {
    problems.Add("--placeholder-namespace must be a namespace name (a DNS label)");
  }
  o.inventory = problems.Take(InventoryChoice::FromFlags(flags));
  return out;
}

namespace {

// The service with its listeners bound, not yet serving.
struct Bound {
  std::unique_ptr<ServerApp> app;
  int port = 0;           // the verbs' listener
  KubeConfig api_server;  // the chosen inventory's, for the placeholders' writer
};

// Reads the policy and the inventory `options` name and binds the listeners; throws InputError
// when a file, an address or the API server they name is unreadable or invalid.
Bound BindServer(const ServeCommandOptions& options) {
  const ServerAppOptions& app_options = options.app;
  std::shared_ptr<const Policy> policy = ValueOrThrow(PolicyFromFlag(app_options.policy_path));
  if (!app_options.policy_path.empty()) {
    spdlog::info("policy {} loaded: digest {}", app_options.policy_path, policy->digest());
  }
  ChosenInventory chosen = ReadChosenInventory(options.inventory);
  if (options.placeholders && !chosen.live()) {
    throw InputError("--placeholders needs an API server (--kubeconfig, or running in a cluster)");
  }
  auto inventory = MakeInventorySource(chosen, policy->gpu_names(), options.live);
  Bound bound{std::make_unique<ServerApp>(app_options, policy, std::move(inventory)), 0,
              chosen.api_server};
  bound.port = bound.app->Bind();
  return bound;
}

}  // namespace

int RunServeCommand(const std::vector<std::string>& args) {
  SetUpServingProcess();
  ServeCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  ConfigureLogging(options.log_format, options.log_level);
  const ServerAppOptions& app_options = options.app;

  // Before any other thread starts (they inherit its signal mask).
  SignalShutdown shutdown(std::chrono::seconds(3));

  Bound bound;
  if (int failed = RunCatchingInputErrors([&] {
        bound = BindServer(options);
        return 0;
      })) {
    return failed;
  }
  std::unique_ptr<ServerApp>& app = bound.app;
  const KubeConfig& api_server = bound.api_server;
  const int port = bound.port;
  if (app_options.ops) {
    spdlog::info("serving /healthz, /readyz, /metrics{} on http://{}:{}",
                 app_options.reports ? "" : ", /capacity and /why-pending", app_options.ops->host,
                 app->ops_port());
  }
  if (app_options.reports) {
    spdlog::info("serving /capacity and /why-pending on http://{}:{}", app_options.reports->host,
                 app->reports_port());
  }
  if (app_options.webhook) {
    spdlog::info("serving the admission webhook on https://{}:{}{}", app_options.webhook->host,
                 app->webhook_port(), kMutatePodsPath);
  }
  std::unique_ptr<PlaceholderController> placeholders;
  if (options.placeholders) {
    placeholders = std::make_unique<PlaceholderController>(
        api_server, app->inventory(), app->policies(),
        PlaceholderControllerOptions{options.placeholder_namespace, ReplicaIdentity()});
    app->metrics().AddCollector(placeholders->Collector());
    spdlog::info("placeholders: on; one replica writes, the holder of the Lease {}/{}",
                 options.placeholder_namespace, kPlaceholderLeaseName);
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
