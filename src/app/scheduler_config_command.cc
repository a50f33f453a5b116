#include "gpusched/app/scheduler_config_command.h"

#include <cctype>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "gpusched/app/command_line.h"
#include "gpusched/kube/api_client.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

constexpr const char* kHostSchedulerKubeconfig = "/etc/kubernetes/scheduler.conf";  // kubeadm's
constexpr const char* kTlsDir = "/etc/kubernetes/gpusched";

std::optional<Install> ParseInstall(const std::string& name) {
  if (name == "kubeadm") return Install::kKubeadm;
  if (name == "service") return Install::kService;
  if (name == "service-tls") return Install::kServiceTls;
  if (name == "second-scheduler") return Install::kSecondScheduler;
  return std::nullopt;
}

bool ReadsServiceAddress(Install install) {
  return install == Install::kService || install == Install::kServiceTls;
}

// What each install gives gpusched, before the flags that override it.
SchedulerConfigSpec InstallDefaults(Install install) {
  SchedulerConfigSpec spec;
  spec.scheduler_kubeconfig = kHostSchedulerKubeconfig;
  switch (install) {
    case Install::kKubeadm:
    case Install::kService:
      break;
    case Install::kServiceTls:
      spec.tls_dir = kTlsDir;
      break;
    case Install::kSecondScheduler:
      spec.scheduler_kubeconfig = "";
      spec.lease = "gpusched-scheduler/gpusched-scheduler";
      spec.scheduler_name = "gpusched";
      break;
  }
  return spec;
}

std::vector<std::string> InstallNote(Install install) {
  switch (install) {
    case Install::kKubeadm:
      return {
          "Install: manifests/kubeadm runs gpusched on every control-plane node, on its loopback,",
          "where the kube-scheduler static pod of that node calls it (docs/install.md, kubeadm)."};
    case Install::kService:
      return {
          "Install: manifests/base; kube-scheduler calls the gpusched Service's ClusterIP, which",
          "its node must route (kube-proxy or the CNI's replacement runs there)."};
    case Install::kServiceTls:
      return {
          "Install: manifests/tls; kube-scheduler calls the gpusched Service's ClusterIP over",
          "mutual TLS: gpusched's certificate must name that IP, and kube-scheduler must be able",
          "to read the three files (mount them into its pod)."};
    case Install::kSecondScheduler:
      return {"Install: manifests/second-scheduler (the ConfigMap gpusched-scheduler-config holds",
              "this): kube-scheduler calls the gpusched sidecar of its own pod."};
  }
  return {};
}

std::string RegistrationNote(Registration registration) {
  switch (registration) {
    case Registration::kRecommended:
      return "Registration: recommended (GPU pods filtered and bound, every pod ranked).";
    case Registration::kGpuPods:
      return "Registration: gpu-pods (one filter entry for GPU pods; with filterBestOnly it "
             "ranks).";
    case Registration::kGpuPodsRanked:
      return "Registration: gpu-pods-ranked (filter and prioritize, GPU pods only).";
    case Registration::kAllPods:
      return "Registration: all-pods (every pod filtered and bound: all wait while gpusched is "
             "down).";
  }
  return {};
}

// An argument as a shell would need it, for the comment that repeats the command.
std::string Quoted(const std::string& arg) {
  bool plain = !arg.empty();
  std::string clean;
  for (char c : arg) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) ||
                      std::string_view("._/:=@~+,-").find(c) != std::string_view::npos;
    plain = plain && safe;
    clean += (c == '\'' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  return plain ? clean : "'" + clean + "'";
}

std::vector<std::string> Header(const SchedulerConfigCommandOptions& options, size_t known,
                                size_t advertised_only) {
  std::string command = "  gpusched scheduler-config";
  for (const auto& arg : options.args) command += " " + Quoted(arg);
  std::vector<std::string> header = {"gpusched registered with kube-scheduler, written by",
                                     command};
  for (auto& line : InstallNote(options.install)) header.push_back(std::move(line));
  if (options.url_given && ReadsServiceAddress(options.install)) {
    header.push_back("The address is --url's: with --kubeconfig instead, the command writes the");
    header.push_back("Service's own ClusterIP.");
  }
  header.push_back(RegistrationNote(options.spec.registration));
  std::string managed = "Managed: nvidia.com/gpu, nvidia.com/gpu.shared";
  if (known > 0) managed += ", the " + std::to_string(known) + " MIG resources NVIDIA documents";
  if (advertised_only > 0) {
    managed += ", " + std::to_string(advertised_only) + " more the cluster's nodes advertise";
  }
  header.push_back(managed + ".");
  return header;
}

size_t KnownMigCount(const std::vector<ManagedResource>& resources) {
  size_t n = 0;
  for (const auto& r : resources) n += r.products.empty() ? 0 : 1;
  return n;
}

// Finishes `options.spec` with `resources` and writes it.
Validated<std::string> Write(const SchedulerConfigCommandOptions& options,
                             std::vector<ManagedResource> resources) {
  SchedulerConfigSpec spec = options.spec;
  const size_t known = KnownMigCount(resources);
  const size_t fixed = 2;  // nvidia.com/gpu and nvidia.com/gpu.shared
  spec.resources = std::move(resources);
  spec.header = Header(options, known, spec.resources.size() - known - fixed);
  Validated<std::string> out;
  out.problems = CheckSchedulerConfigSpec(spec);
  if (out.ok()) out.value = WriteSchedulerConfig(spec);
  return out;
}

// "http(s)://CLUSTER-IP:PORT" of the Service `options.service`, as the API server has it.
std::string ServiceUrl(const SchedulerConfigCommandOptions& options, const KubeConfig& config) {
  const auto slash = options.service.find('/');
  const std::string path = "/api/v1/namespaces/" + options.service.substr(0, slash) + "/services/" +
                           options.service.substr(slash + 1);
  ApiClient client(config);
  HttpResult got = client.Get(path);
  if (!got.ok()) {
    throw InputError("cannot read the Service " + options.service + " (" + path +
                     "): " + got.failure() + "; install it first, or give --url");
  }
  // The answer is the API server's, and checked as any: a field of the wrong type is no address.
  const auto service = nlohmann::json::parse(got.body, nullptr, false);
  const nlohmann::json::json_pointer at("/spec/clusterIP");
  const bool has_ip = service.is_object() && service.contains(at) && service[at].is_string();
  const std::string ip = has_ip ? service[at].get<std::string>() : "";
  if (ip.empty() || ip == "None") {
    throw InputError("the Service " + options.service + " has no ClusterIP; give --url");
  }
  const bool tls = options.install == Install::kServiceTls;
  std::string host = ip;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6
  return std::string(tls ? "https://" : "http://") + host + (tls ? ":8443" : ":8888");
}

int Run(SchedulerConfigCommandOptions options) {
  const bool cluster = options.view.inventory.Kind(RunningInCluster()) != InventoryKind::kSample;
  if (!cluster && options.resources == SchedulerConfigCommandOptions::Resources::kCluster) {
    return Fail("--resources cluster needs a cluster: --kubeconfig or --cluster");
  }
  if (!cluster && !options.url_given && ReadsServiceAddress(options.install)) {
    return Fail(
        "--install service and service-tls read the Service's ClusterIP: give "
        "--kubeconfig, or the address with --url");
  }
  if (!cluster) {
    auto written = SchedulerConfigWithoutCluster(options);
    if (!written.ok()) return Fail(written.problems);
    std::cout << written.value;
    return 0;
  }
  ClusterView view = LoadClusterView(options.view);
  if (!options.url_given && ReadsServiceAddress(options.install)) {
    if (!view.chosen.live()) return Fail("--cluster holds no Service: give --url");
    options.spec.url = ServiceUrl(options, view.chosen.api_server);
  }
  using Resources = SchedulerConfigCommandOptions::Resources;
  const GpuResourceNames names(view.policy->spec().gpu_resources);
  const bool read_nodes = options.resources != Resources::kKnown;
  AdvertisedResources advertised;
  if (read_nodes) advertised = AdvertisedGpuResources(*view.snapshot, names);
  for (const auto& name : advertised.refused) {
    PrintError("warning: skipped a GPU resource a node advertises, not a resource name: " + name);
  }
  auto written =
      Write(options, ManagedGpuResources(advertised.nodes,
                                         read_nodes ? names.extra() : std::vector<std::string>{},
                                         options.resources != Resources::kCluster));
  if (!written.ok()) return Fail(written.problems);
  std::cout << written.value;
  return 0;
}

}  // namespace

FlagSet SchedulerConfigCommandOptions::Flags() {
  FlagSet flags(
      "gpusched scheduler-config", "gpusched scheduler-config [flags] > scheduler-config.yaml",
      "Writes the KubeSchedulerConfiguration that registers gpusched with kube-scheduler, for\n"
      "the install at hand: the address it gives gpusched, the matching TLS settings, and every\n"
      "GPU resource the filter entry must manage (no wildcard exists: a pod asking only for an\n"
      "unlisted one skips gpusched's filter): the MIG profiles NVIDIA documents (A30 to B200),\n"
      "plus, with --kubeconfig or --cluster, every GPU resource the cluster's nodes advertise.\n"
      "Reads the cluster once; never writes to it. docs/install.md says where the file goes.");
  flags.AddTable(R"(
--install INSTALL = kubeadm
    where gpusched runs: kubeadm (manifests/kubeadm: every control-plane node's loopback,
    http://127.0.0.1:8888), service (manifests/base: the Service's ClusterIP, read from the
    cluster), service-tls (manifests/tls: the same over mutual TLS on 8443), second-scheduler (the
    sidecar of manifests/second-scheduler)
--registration KIND = recommended
    recommended (a binding filter entry for GPU pods and an ignorable prioritize entry for every
    pod), gpu-pods (one filter entry for GPU pods: with the shipped filterBestOnly policy its
    answer is the ranking), gpu-pods-ranked (filter and prioritize for GPU pods), all-pods (every
    pod filtered and bound by gpusched)
--url URL
    the address kube-scheduler calls (urlPrefix), instead of the install's
--service NAMESPACE/NAME = gpusched/gpusched
    gpusched's Service, whose ClusterIP --install service and service-tls read
--tls-dir DIR
    with an https --url: where kube-scheduler finds ca.crt, client.crt and client.key; default for
    service-tls: /etc/kubernetes/gpusched
--scheduler-kubeconfig PATH
    clientConnection.kubeconfig of kube-scheduler (it ignores its --kubeconfig flag once it reads a
    configuration file); in-cluster for the pod's service account, none to write no
    clientConnection; default: /etc/kubernetes/scheduler.conf, in-cluster for the second scheduler
--scheduler-name NAME
    write one profile of this name (pods opt in with spec.schedulerName); default: gpusched for the
    second scheduler, else the default profile
--lease NAMESPACE/NAME
    leader election on this Lease; default: gpusched-scheduler/gpusched-scheduler for the second
    scheduler, else kube-scheduler's own
--resources WHICH = both
    GPU resources to manage: known (nvidia.com/gpu, .shared and every documented MIG profile),
    cluster (those the nodes advertise, and the policy's gpuResources), or both
)");
  ClusterViewOptions::AddFlags(flags);
  return flags;
}

Validated<SchedulerConfigCommandOptions> SchedulerConfigCommandOptions::FromFlags(
    const FlagSet& flags, std::vector<std::string> args) {
  Validated<SchedulerConfigCommandOptions> out;
  SchedulerConfigCommandOptions& o = out.value;
  CheckNoArguments(flags, "scheduler-config", out.problems);
  o.args = std::move(args);
  auto install = ParseInstall(flags.Get("install"));
  if (!install) {
    out.problems.Add("--install " + flags.Get("install") +
                     ": not kubeadm, service, service-tls or second-scheduler");
  }
  o.install = install.value_or(Install::kKubeadm);
  o.spec = InstallDefaults(o.install);
  auto registration = ParseRegistration(flags.Get("registration"));
  if (!registration) {
    out.problems.Add("--registration " + flags.Get("registration") +
                     ": not recommended, gpu-pods, gpu-pods-ranked or all-pods");
  }
  o.spec.registration = registration.value_or(Registration::kRecommended);
  o.url_given = !flags.Get("url").empty();
  if (o.url_given) o.spec.url = flags.Get("url");
  o.service = flags.Get("service");
  if (o.service.find('/') == std::string::npos) {
    out.problems.Add("--service " + o.service + ": not NAMESPACE/NAME");
  }
  if (!flags.Get("tls-dir").empty()) o.spec.tls_dir = flags.Get("tls-dir");
  if (const std::string& k = flags.Get("scheduler-kubeconfig"); !k.empty()) {
    o.spec.scheduler_kubeconfig = k == "none"         ? std::nullopt
                                  : k == "in-cluster" ? std::optional<std::string>("")
                                                      : std::optional<std::string>(k);
  }
  if (!flags.Get("scheduler-name").empty()) o.spec.scheduler_name = flags.Get("scheduler-name");
  if (!flags.Get("lease").empty()) o.spec.lease = flags.Get("lease");
  const std::string& resources = flags.Get("resources");
  if (resources == "known") {
    o.resources = Resources::kKnown;
  } else if (resources == "cluster") {
    o.resources = Resources::kCluster;
  } else if (resources != "both") {
    out.problems.Add("--resources " + resources + ": not known, cluster or both");
  }
  o.view = out.problems.Take(ClusterViewOptions::FromFlags(flags));
  return out;
}

Validated<std::string> SchedulerConfigWithoutCluster(const SchedulerConfigCommandOptions& options) {
  return Write(options, ManagedGpuResources({}, {}, true));
}

int RunSchedulerConfigCommand(const std::vector<std::string>& args) {
  FlagSet flags = SchedulerConfigCommandOptions::Flags();
  if (auto done = ParseOrHelp(flags, args)) return *done;
  auto read = SchedulerConfigCommandOptions::FromFlags(flags, args);
  if (!read.ok()) return Fail(read.problems);
  return RunCatchingInputErrors([&] { return Run(read.value); });
}

}  // namespace gpusched
