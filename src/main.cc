// gpusched: the command-line entry point. Subcommands: serve, simulate, explain, capacity,
// policy check, sample-cluster, version.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "gpusched/app/server_app.h"
#include "gpusched/capacity/capacity.h"
#include "gpusched/capacity/capacity_svg.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/flags.h"
#include "gpusched/cli/progress_bar.h"
#include "gpusched/cli/signal_shutdown.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/explain/explain.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/server/http_transport.h"
#include "gpusched/server/logging.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/report.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/sim/sim_batch.h"
#include "gpusched/sim/simulator.h"
#include "gpusched/util/quantity.h"

namespace gpusched {
namespace {

constexpr char kTopHelp[] =
    "Usage: gpusched <command> [flags]\n"
    "\n"
    "gpusched is a GPU-aware scheduler extender for Kubernetes: kube-scheduler calls it to filter\n"
    "and rank nodes for pods that ask for NVIDIA GPUs.\n"
    "\n"
    "Commands:\n"
    "  serve           run the extender HTTP service\n"
    "  explain         show, node by node, how a pod would be filtered and scored\n"
    "  capacity        what fits now: GPUs idle and fragmented, and how many more pods of each\n"
    "                  standard shape fit, per GPU product and node pool\n"
    "  policy check    validate a policy file and print the effective policy\n"
    "  sample-cluster  print the bundled sample cluster (the default inventory of serve)\n"
    "  simulate        packing benchmark: place a GPU trace with scheduling policies, report\n"
    "                  unallocated and fragmented GPU\n"
    "  version         print the version\n"
    "\n"
    "Run 'gpusched <command> --help' for the flags of a command.\n";

FlagSet ServeFlags() {
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
            "also serve /healthz, /readyz, /metrics and /capacity over plain "
            "HTTP here (for probes and Prometheus when the main "
            "listener requires client certificates)"});
  return f;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "gpusched: %s\n", message.c_str());
  return 2;
}

// Parses `args` into `flags`; returns the exit code when the command is already done (a flag
// error, or --help printed).
std::optional<int> ParseOrHelp(FlagSet& flags, const std::vector<std::string>& args) {
  if (auto error = flags.Parse(args)) return Fail(*error);
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  return std::nullopt;
}

// The policy a --policy flag names: the file at `path`, or the built-in default when `path` is
// empty; nullptr, with the file's errors printed, when the file does not validate.
std::shared_ptr<const Policy> PolicyFromFlag(const std::string& path) {
  if (path.empty()) return std::make_shared<const Policy>(DefaultPolicySpec());
  std::vector<std::string> errors;
  auto policy = LoadPolicy(path, errors);
  for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
  return policy;
}

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
  o.max_body_bytes = static_cast<size_t>(MilliToUnitsCeil(*body));
  constexpr int64_t kMaxInflightMilli = (int64_t{64} << 30) * 1000;
  auto inflight = ParseQuantityMilli(f.Get("max-inflight-body-bytes"));
  // Below 64Ki a few headers would fill it.
  if (!inflight || *inflight < (int64_t{64} << 10) * 1000 || *inflight > kMaxInflightMilli) {
    error = "--max-inflight-body-bytes must be a quantity from 64Ki to 64Gi, such as 256Mi";
    return std::nullopt;
  }
  o.max_inflight_body_bytes = static_cast<size_t>(MilliToUnitsCeil(*inflight));
  // A body the budget could never hold is too large (413), not a reason to retry later (503).
  if (o.max_body_bytes > o.max_inflight_body_bytes) {
    o.max_body_bytes = o.max_inflight_body_bytes;
    spdlog::warn(
        "--max-body-bytes is over --max-inflight-body-bytes: bodies are limited to {} bytes",
        o.max_body_bytes);
  }
  auto threads = ParseWholeNumber(f.Get("threads"), 1, 1024);
  auto keep_alive = ParseWholeNumber(f.Get("keep-alive-timeout"), 1, 86400);
  if (!threads || !keep_alive) {
    error = "--threads and --keep-alive-timeout take positive whole numbers";
    return std::nullopt;
  }
  o.threads = static_cast<int>(*threads);
  o.keep_alive_seconds = static_cast<int>(*keep_alive);
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

// The plain-HTTP operations listener of --ops-listen, if any.
std::optional<ServerOptions> OpsOptionsFrom(const FlagSet& f, const ServerOptions& main,
                                            std::string& error) {
  if (f.Get("ops-listen").empty()) return std::nullopt;
  ServerOptions o;
  o.serve_verbs = false;
  o.threads = 2;
  // Its routes take no body. A budget of its own: the verbs' traffic can never fail the probes.
  o.max_body_bytes = 64 << 10;
  o.max_inflight_body_bytes = 4 << 20;
  o.keep_alive_seconds = main.keep_alive_seconds;
  o.request_timeout = main.request_timeout;
  o.max_connections = main.max_connections;
  if (!ParseListen("ops-listen", f.Get("ops-listen"), o, error)) return std::nullopt;
  return o;
}

// The inventory --cluster / --kubeconfig / the environment choose: the API server of the
// kubeconfig or of the pod's service account, else the file or the bundled sample cluster.
std::unique_ptr<InventorySource> InventoryFromFlags(const FlagSet& flags,
                                                    const GpuResourceNames& gpu_names,
                                                    const LiveInventoryOptions& live_options,
                                                    std::string& error) {
  const std::string& source = flags.Get("cluster");
  const std::string& kubeconfig = flags.Get("kubeconfig");
  if (!source.empty() && !kubeconfig.empty()) {
    error = "--cluster and --kubeconfig exclude each other";
    return nullptr;
  }
  try {
    if (!kubeconfig.empty() || (source.empty() && RunningInCluster())) {
      KubeConfig kube =
          kubeconfig.empty() ? InClusterConfig() : LoadKubeconfig(kubeconfig, flags.Get("context"));
      spdlog::info("watching nodes and pods at {} (context {})", kube.server, kube.context);
      return MakeLiveSource(kube, gpu_names, live_options);
    }
    Inventory inventory =
        LoadInventoryOrSample(source, flags.Get("allow-empty-inventory") == "true");
    if (inventory.skipped_objects > 0) {
      spdlog::info("inventory: skipped {} objects that are neither Node nor Pod",
                   inventory.skipped_objects);
    }
    return MakeStaticSource(inventory, gpu_names,
                            source.empty() ? std::string("bundled sample cluster") : source);
  } catch (const KubeConfigError& e) {
    error = e.what();
  } catch (const InventoryError& e) {
    error = e.what();
  }
  return nullptr;
}

int Serve(const std::vector<std::string>& args) {
  UseOneAllocatorArena();
  FlagSet flags = ServeFlags();
  if (auto done = ParseOrHelp(flags, args)) return *done;
  if (!flags.positional().empty())
    return Fail("serve takes no arguments: " + flags.positional()[0]);
  auto level = spdlog::level::from_str(flags.Get("log-level"));
  if (level == spdlog::level::off && flags.Get("log-level") != "off") {
    return Fail("unknown --log-level " + flags.Get("log-level"));
  }
  auto log_format = ParseLogFormat(flags.Get("log-format"));
  if (!log_format) return Fail("--log-format must be text or json");
  ConfigureLogging(*log_format, level);
  ServerAppOptions app_options;
  std::string error;
  auto server_options = ServerOptionsFrom(flags, error);
  if (!server_options) return Fail(error);
  app_options.server = *server_options;
  app_options.ops = OpsOptionsFrom(flags, app_options.server, error);
  if (!app_options.ops && !error.empty()) return Fail(error);
  app_options.policy_path = flags.Get("policy");
  auto reload_seconds = ParseWholeNumber(flags.Get("policy-reload-interval"), 1, 3600);
  if (!reload_seconds) return Fail("--policy-reload-interval takes a whole number of seconds");
  app_options.policy_reload_interval = std::chrono::seconds(*reload_seconds);
  auto assume_ttl = ParseWholeNumber(flags.Get("assume-ttl"), 0, 3600);
  if (!assume_ttl) return Fail("--assume-ttl takes a whole number of seconds within 0..3600");
  auto half_life = ParseWholeNumber(flags.Get("workload-half-life"), 1, 30 * 86400);
  if (!half_life)
    return Fail("--workload-half-life takes a whole number of seconds within 1..2592000");
  LiveInventoryOptions live_options;
  live_options.assume_ttl = std::chrono::seconds(*assume_ttl);
  live_options.workload_half_life = std::chrono::seconds(*half_life);

  // Before any other thread starts (they inherit its signal mask).
  SignalShutdown shutdown(std::chrono::seconds(3));

  std::shared_ptr<const Policy> policy = PolicyFromFlag(app_options.policy_path);
  if (!policy) return Fail("invalid policy " + app_options.policy_path);
  if (!app_options.policy_path.empty()) {
    spdlog::info("policy {} loaded: digest {}", app_options.policy_path, policy->digest());
  }
  auto inventory = InventoryFromFlags(flags, GpuResourceNames(policy->spec().gpu_resources),
                                      live_options, error);
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
    spdlog::info("serving /healthz, /readyz, /metrics and /capacity on http://{}:{}", app_options.ops->host,
                 app->ops_port());
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

int Explain(const std::vector<std::string>& args) {
  FlagSet flags(
      "gpusched explain", "gpusched explain --pod POD.yaml [flags]",
      "Shows how gpusched would place a pod: for every node of the inventory, the verdict,\n"
      "the reason, each plugin's score and weight, the extender score; then the ranking.\n"
      "It runs the same engine and policy as serve.");
  flags
      .Add({"pod", "FILE", "",
            "the pod, YAML or JSON (a v1.Pod; apiVersion and kind may be left out, as in the "
            "Pod of an extender request)"})
      .Add({"cluster", "FILE", "", "inventory (as for serve); default: the bundled sample cluster"})
      .Add({"allow-empty-inventory", "", "false", "accept a --cluster holding no Node"})
      .Add({"policy", "FILE", "", "policy file; default: the built-in default policy"})
      .Add({"output", "FORMAT", "text", "text or json"})
      .Add({"blend", "MODE", "",
            "also show what kube-scheduler adds: least-allocated (its default profile) or "
            "most-allocated NodeResourcesFit, BalancedAllocation and the extender's score x "
            "weight x 10, and the node it would pick"})
      .Add({"extender-weight", "W", "5", "the extender's weight with --blend (the README's 5)"});
  if (auto done = ParseOrHelp(flags, args)) return *done;
  if (flags.Get("pod").empty()) return Fail("explain needs --pod FILE");
  std::optional<BlendSettings> blend;
  if (const std::string& mode = flags.Get("blend"); !mode.empty()) {
    if (mode != "least-allocated" && mode != "most-allocated")
      return Fail("--blend must be least-allocated or most-allocated");
    auto weight = ParseWholeNumber(flags.Get("extender-weight"), 1, 100);
    if (!weight) return Fail("--extender-weight takes a whole number within 1..100");
    blend = BlendSettings{
        mode == "most-allocated" ? InTreeScore::kMostAllocated : InTreeScore::kLeastAllocated,
        static_cast<double>(*weight)};
  }
  const std::string& output = flags.Get("output");
  if (output != "text" && output != "json") return Fail("--output must be text or json");
  std::shared_ptr<const Policy> policy = PolicyFromFlag(flags.Get("policy"));
  if (!policy) return Fail("invalid policy " + flags.Get("policy"));
  Inventory inventory;
  PodInfo pod;
  try {
    inventory =
        LoadInventoryOrSample(flags.Get("cluster"), flags.Get("allow-empty-inventory") == "true");
    pod = LoadPodFile(flags.Get("pod"));
  } catch (const InventoryError& e) {
    return Fail(e.what());
  }
  ClusterLedger ledger{GpuResourceNames(policy->spec().gpu_resources)};
  ApplyInventory(inventory, ledger);
  auto snapshot = ledger.BuildSnapshot();
  Explanation e = gpusched::Explain(*policy, *snapshot, pod, blend);
  std::cout << (output == "json" ? FormatExplanationJson(e) : FormatExplanationText(e));
  return 0;
}

int Capacity(const std::vector<std::string>& args) {
  FlagSet flags(
      "gpusched capacity", "gpusched capacity [flags]",
      "Shows what fits in the cluster now, per GPU product (and per node pool with --pool-label):\n"
      "GPUs total, allocated, idle and idle but fragmented (FGD's measure against the target\n"
      "workload), and how many more pods of each standard shape fit (1, 2, 4, 8 GPUs, one slice\n"
      "of every MIG profile offered, one gpu.shared replica), each shape counted alone, placed\n"
      "one by one through the same engine and policy as serve. Reads the inventory once; never\n"
      "writes to the cluster.");
  flags
      .Add({"kubeconfig", "FILE", "",
            "list nodes and pods once through the API server of this kubeconfig (inside a pod "
            "the service account is used without this flag)"})
      .Add({"context", "NAME", "", "kubeconfig context; default: its current-context"})
      .Add({"cluster", "FILE", "",
            "inventory (as for serve); default without an API server: the bundled sample "
            "cluster"})
      .Add({"allow-empty-inventory", "", "false", "accept a --cluster holding no Node"})
      .Add({"policy", "FILE", "", "policy file; default: the built-in default policy"})
      .Add({"pool-label", "KEY", "",
            "also group nodes by this node label, nodes without it under (none); an nvidia.com/ "
            "label (such as nvidia.com/gpu.family), the only ones gpusched keeps of a node"})
      .Add({"json", "", "false", "print one JSON object instead of tables"})
      .Add({"svg", "FILE", "",
            "also write a picture to FILE: every GPU node as a row of cells (allocated, idle, "
            "fragmented, MIG slices, shared replicas), grouped by product"})
      .Add({"sync-timeout", "SECONDS", "60",
            "with an API server: how long to wait for the first complete lists"});
  if (auto done = ParseOrHelp(flags, args)) return *done;
  if (!flags.positional().empty()) {
    return Fail("capacity takes no arguments: " + flags.positional()[0]);
  }
  const std::string& pool_label = flags.Get("pool-label");
  if (!pool_label.empty() && !IsPinLabel(pool_label)) {
    return Fail("--pool-label " + pool_label +
                ": gpusched keeps only the nvidia.com/ labels of a node (not "
                "nvidia.com/gfd.timestamp); name one of those, such as nvidia.com/gpu.family");
  }
  auto sync_timeout = ParseWholeNumber(flags.Get("sync-timeout"), 1, 3600);
  if (!sync_timeout) return Fail("--sync-timeout takes a whole number of seconds within 1..3600");
  // Logs go to stderr: stdout carries the report, which --json makes one parseable object.
  ConfigureLogging(LogFormat::kText, spdlog::level::warn);
  std::shared_ptr<const Policy> policy = PolicyFromFlag(flags.Get("policy"));
  if (!policy) return Fail("invalid policy " + flags.Get("policy"));
  std::string error;
  auto source = InventoryFromFlags(flags, GpuResourceNames(policy->spec().gpu_resources),
                                   LiveInventoryOptions{}, error);
  if (!source) return Fail(error);
  // A live source publishes once both initial lists are in; a static one is ready at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*sync_timeout);
  for (Readiness r = source->readiness(); !r.ready; r = source->readiness()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Fail("the inventory was not complete within --sync-timeout: " + r.detail);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto snapshot = source->snapshots().Get();
  CapacityReport report = ComputeCapacity(*policy, *snapshot, CapacityOptions{pool_label});
  report.inventory = source->description();
  if (const std::string& svg = flags.Get("svg"); !svg.empty()) {
    std::ofstream file(svg, std::ios::binary | std::ios::trunc);
    file << FormatCapacitySvg(report, *snapshot);
    file.close();
    if (!file) return Fail("--svg " + svg + ": cannot write the file");
  }
  std::cout << (flags.Get("json") == "true" ? FormatCapacityJson(report)
                                            : FormatCapacityText(report));
  return 0;
}

int PolicyCommand(const std::vector<std::string>& args) {
  FlagSet flags(
      "gpusched policy", "gpusched policy check FILE",
      "check: validates a policy file. Prints the effective policy (every default filled\n"
      "in) and exits 0, or prints each error as FILE:LINE:COLUMN: KEY: PROBLEM and exits 1.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  const auto& words = flags.positional();
  if (words.size() != 2 || words[0] != "check") return Fail("usage: gpusched policy check FILE");
  std::vector<std::string> errors;
  auto policy = LoadPolicy(words[1], errors);
  if (!policy) {
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "%s: %zu error%s\n", words[1].c_str(), errors.size(),
                 errors.size() == 1 ? "" : "s");
    return 1;
  }
  std::cout << "# " << words[1] << ": valid, digest " << policy->digest() << "\n"
            << FormatPolicy(policy->spec());
  return 0;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

int Simulate(const std::vector<std::string>& args) {
  std::string names;
  for (const auto& n : BuiltinSimPolicyNames()) names += (names.empty() ? "" : ", ") + n;
  FlagSet flags(
      "gpusched simulate",
      "gpusched simulate --nodes CSV --pods CSV [flags]\n       gpusched simulate --scenario FILE "
      "[flags]",
      "Packing benchmark (FGD, USENIX ATC'23 method): shuffles the pods with each seed, extends\n"
      "them to --tune times the cluster's GPU capacity (or, with --order trace, takes them in the\n"
      "file's order up to --tune times it), places them one by one with each policy through\n"
      "gpusched's engine, and reports unallocated and fragmented GPU against arrived workload and\n"
      "the GPU allocated after the last pod. Policies: " +
          names + ", or a policy file.");
  flags.Add({"nodes", "CSV", "", "cluster: an openb node list (sn,cpu_milli,memory_mib,gpu,model)"})
      .Add({"pods", "CSV", "",
            "workload: an openb pod list "
            "(name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec...])"})
      .Add({"scenario", "FILE", "",
            "cluster and workload from a scenario YAML (node templates with GFD "
            "labels and MIG resources, pod mixes) instead of --nodes and --pods; "
            "examples in bench/scenarios/"})
      .Add({"policy", "NAME[,NAME...]", "fgd,gpusched",
            "policies to compare: built-in names or policy files"})
      .Add({"seeds", "LIST", "42-51", "seeds, as a range 42-51 or a list 42,43"})
      .Add({"jobs", "N", "2", "runs simulated in parallel"})
      .Add({"tune", "X", "1.3", "workload size as a multiple of the cluster's GPU capacity"})
      .Add({"order", "MODE", "shuffle",
            "arrival order: shuffle (FGD's: name-sorted, shuffled per seed, extended with "
            "clones) or trace (the file's order, as created, cut where the GPUs asked reach "
            "--tune times the capacity; no clones)"})
      .Add({"blend", "MODE", "",
            "model a real kube-scheduler v1.26 with the policy registered as an extender: node "
            "sampling (--percentage-of-nodes-to-score), NodeResourcesFit filter (pods, cpu, "
            "memory, GPUs), then per node NodeResourcesFit least-allocated (the default profile) "
            "or most-allocated (nvidia.com/gpu 5, cpu 1, memory 1) plus BalancedAllocation plus "
            "the extender's 0..10 score x weight x 10; ties broken per pod unless --tie-break "
            "says otherwise; policy none: no extender"})
      .Add({"extender-weight", "W", "1", "the extender's weight in --blend mode"})
      .Add({"extender-filter", "PODS", "gpu",
            "in --blend mode, the pods the extender's filter judges: gpu (a filter entry with "
            "managedResources, as the README registers it) or all"})
      .Add({"extender-prioritize", "PODS", "all",
            "in --blend mode, the pods the extender's score counts for: all (a prioritize "
            "entry without managedResources, as the README registers it) or gpu"})
      .Add({"extender-filter-top", "BOOL", "false",
            "in --blend mode, the extender's filter passes only "
            "its best-scored nodes (as a policy with "
            "filterBestOnly: true does anyway)"})
      .Add({"percentage-of-nodes-to-score", "N", "",
            "kube-scheduler's percentageOfNodesToScore (0..100): nodes are filtered from a "
            "rotating start until this share of them is found feasible (at least 100), and "
            "only those are scored; 0 is its adaptive default (50% minus 1 point per 125 nodes, "
            "at least 5%); default: 0 in --blend mode, 100 (every node) otherwise"})
      .Add({"tie-break", "MODE", "",
            "override how equal scores are broken: node-order (one seeded node "
            "order per run, the paper's behaviour) or per-pod (a fresh draw per "
            "pod, as kube-scheduler); default: per-pod for random, else node-order"})
      .Add({"out-json", "FILE", "", "write the report (policies, per-seed figures) as JSON"})
      .Add({"out-csv", "FILE", "",
            "write the curves (policy, seed, arrived %, allocated %, ...) as CSV"})
      .Add({"out-svg", "FILE", "", "plot unallocated GPU against arrived workload as SVG"})
      .Add({"progress", "BOOL", "true", "show a progress bar on stderr"});
  if (auto done = ParseOrHelp(flags, args)) return *done;
  const std::string& scenario = flags.Get("scenario");
  if (scenario.empty() == (flags.Get("nodes").empty() || flags.Get("pods").empty())) {
    return Fail("simulate needs --nodes and --pods, or --scenario");
  }
  auto seed_list = ParseSeedList(flags.Get("seeds"));
  if (!seed_list) return Fail("--seeds must be a range such as 42-51 or a list such as 42,43");
  auto jobs = ParseWholeNumber(flags.Get("jobs"), 1, 256);
  if (!jobs) return Fail("--jobs takes a whole number from 1");
  auto tune = ParseDecimal(flags.Get("tune"), 0, 10);
  if (!tune || *tune <= 0) return Fail("--tune must be a number in (0, 10]");
  SimBatch batch;
  batch.seeds = std::move(*seed_list);
  batch.jobs = static_cast<int>(*jobs);
  SimOptions& base = batch.base;
  base.tune = *tune;
  if (const std::string& order = flags.Get("order"); order == "trace") {
    base.order = ArrivalOrder::kTrace;
  } else if (order != "shuffle") {
    return Fail("--order must be shuffle or trace");
  }
  if (const std::string& pct = flags.Get("percentage-of-nodes-to-score"); !pct.empty()) {
    auto parsed = ParseWholeNumber(pct, 0, 100);
    if (!parsed) return Fail("--percentage-of-nodes-to-score takes a whole number from 0 to 100");
    base.percentage_of_nodes_to_score = static_cast<int>(*parsed);
  }
  const std::string& blend = flags.Get("blend");
  if (!blend.empty() && blend != "least-allocated" && blend != "most-allocated") {
    return Fail("--blend must be least-allocated or most-allocated");
  }
  for (const char* flag : {"extender-filter-top", "progress"}) {
    if (!ParseBool(flags.Get(flag)))
      return Fail(std::string("--") + flag + " must be true or false");
  }
  if (!blend.empty()) {
    auto weight = ParseDecimal(flags.Get("extender-weight"), 0, 100);
    if (!weight || *weight <= 0) return Fail("--extender-weight must be a number in (0, 100]");
    base.blend = BlendOptions{
        true,
        blend == "most-allocated" ? InTreeScore::kMostAllocated : InTreeScore::kLeastAllocated,
        *weight, *ParseBool(flags.Get("extender-filter-top"))};
    const std::pair<const char*, ExtenderPods*> scopes[] = {
        {"extender-filter", &base.blend.filtered},
        {"extender-prioritize", &base.blend.prioritized}};
    for (const auto& [flag, pods] : scopes) {
      const std::string& value = flags.Get(flag);
      if (value != "gpu" && value != "all") {
        return Fail(std::string("--") + flag + " must be gpu or all");
      }
      *pods = value == "gpu" ? ExtenderPods::kGpuPods : ExtenderPods::kAllPods;
    }
  }
  const std::string& ties = flags.Get("tie-break");
  if (ties == "node-order") {
    base.ties = TieBreak::kNodeOrder;
  } else if (ties == "per-pod") {
    base.ties = TieBreak::kPerPod;
  } else if (!ties.empty()) {
    return Fail("--tie-break must be node-order or per-pod");
  } else if (base.blend.enabled) {
    base.ties = TieBreak::kPerPod;  // kube-scheduler's selectHost draws among equal totals
  }

  auto policy_names = ParseNameList(flags.Get("policy"));
  if (!policy_names) return Fail("--policy takes policy names or files joined by commas");
  std::vector<std::string> errors;
  auto policies = ResolveSimPolicies(*policy_names, errors);
  for (size_t i = 0; i + 1 < errors.size(); ++i) std::fprintf(stderr, "%s\n", errors[i].c_str());
  if (!policies) return Fail(errors.empty() ? "no policy" : errors.back());
  batch.policies = std::move(*policies);
  for (const SimPolicy& p : batch.policies) {
    if (!p.policy && !base.blend.enabled) {
      return Fail("--policy " + p.name + " models kube-scheduler without an extender: add --blend");
    }
  }
  std::vector<TraceNode> nodes;
  std::vector<TracePod> pods;
  try {
    if (!scenario.empty()) {
      Scenario s = LoadScenario(scenario);
      nodes = std::move(s.nodes);
      pods = std::move(s.pods);
    } else {
      nodes = LoadOpenbNodes(flags.Get("nodes"));
      pods = LoadOpenbPods(flags.Get("pods"));
    }
  } catch (const TraceError& e) {
    return Fail(e.what());
  }

  size_t run_count = batch.policies.size() * batch.seeds.size();
  ProgressBar progress("of " + std::to_string(run_count) + " runs",
                       flags.Get("progress") == "true");
  auto started = std::chrono::steady_clock::now();
  std::vector<PolicySummary> summary =
      RunSimBatch(nodes, pods, batch, [&](double share) { progress.Update(share); });
  progress.Finish();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  ReportInputs inputs{scenario.empty() ? flags.Get("nodes") : scenario,
                      scenario.empty() ? flags.Get("pods") : scenario,
                      *tune,
                      blend.empty() ? ""
                                    : blend + " + extender x " + flags.Get("extender-weight") +
                                          ", filter " + flags.Get("extender-filter") +
                                          " pods, prioritize " + flags.Get("extender-prioritize") +
                                          " pods" + (base.blend.filter_top ? ", filter top" : ""),
                      ties,
                      flags.Get("order"),
                      PercentageOfNodesToScore(base)};
  std::cout << FormatSummaryTable(summary) << std::flush;
  std::fprintf(stderr, "%zu runs in %.1f s with %lld jobs\n", run_count, seconds,
               static_cast<long long>(*jobs));
  const std::pair<const char*, std::function<std::string()>> outputs[] = {
      {"out-json", [&] { return FormatReportJson(inputs, summary); }},
      {"out-csv", [&] { return FormatCurvesCsv(summary); }},
      {"out-svg", [&] { return FormatCurvesSvg(summary, "Unallocated GPU, " + inputs.pods_path); }},
  };
  for (const auto& [flag, format] : outputs) {
    const std::string& path = flags.Get(flag);
    if (!path.empty() && !WriteFile(path, format())) return Fail("cannot write " + path);
  }
  return 0;
}

int PrintVersion(const std::vector<std::string>& args) {
  FlagSet flags("gpusched version", "gpusched version", "Prints the version of gpusched.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  std::cout << "gpusched " << GPUSCHED_VERSION << "\n";
  return 0;
}

int SampleCluster(const std::vector<std::string>& args) {
  FlagSet flags("gpusched sample-cluster", "gpusched sample-cluster",
                "Prints the bundled sample cluster (YAML), the inventory serve uses when no\n"
                "--cluster is given. Save it, edit it, and pass it back with --cluster.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  std::cout << kSampleClusterYaml;
  return 0;
}

}  // namespace
}  // namespace gpusched

int main(int argc, char** argv) {
  using namespace gpusched;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kTopHelp;
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "serve") return Serve(args);
  if (command == "version" || command == "--version") return PrintVersion(args);
  if (command == "sample-cluster") return SampleCluster(args);
  if (command == "explain") return Explain(args);
  if (command == "capacity") return Capacity(args);
  if (command == "policy") return PolicyCommand(args);
  if (command == "simulate") return Simulate(args);
  return Fail("unknown command \"" + command + "\"\n\n" + kTopHelp);
}
