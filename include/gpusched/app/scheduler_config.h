// SchedulerConfig: the KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) that registers
// gpusched with kube-scheduler, written from a description of the install: where kube-scheduler
// reaches gpusched, with which TLS files, as which profile, and which GPU resources the filter
// entry manages. `gpusched scheduler-config` writes it for the cluster at hand, and the files of
// manifests/scheduler-config/ are its output (tests/scheduler_config_test.cc regenerates them),
// so no registration is written by hand.
//
// The writer is a pure function: no file, flag or API server is read here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/util/validated.h"

namespace gpusched {

class ClusterSnapshot;   // cluster/cluster_snapshot.h
class GpuResourceNames;  // model/gpu_resources.h

// Which extender entries, and which pods they see.
enum class Registration {
  kRecommended,    // a filter entry for GPU pods (binding) + a prioritize entry for every pod
  kGpuPods,        // one filter entry for GPU pods (with filterBestOnly, the filter ranks)
  kGpuPodsRanked,  // one filter + prioritize entry for GPU pods
  kAllPods,        // one filter + prioritize entry for every pod (binding for all of them)
};

// "recommended", "gpu-pods", "gpu-pods-ranked", "all-pods".
std::optional<Registration> ParseRegistration(const std::string& name);

// A GPU resource the filter entry manages, and why it is listed (for the comment beside it).
struct ManagedResource {
  std::string name;                   // nvidia.com/mig-1g.10gb
  std::vector<std::string> products;  // known products offering it (KnownMigProducts)
  int advertising_nodes = 0;          // nodes of the cluster read that advertise it
};

struct SchedulerConfigSpec {
  Registration registration = Registration::kRecommended;
  // kube-scheduler's urlPrefix: scheme, host, port and gpusched's --url-prefix, if any.
  std::string url = "http://127.0.0.1:8888";
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  // Non-empty: the entries call over HTTPS and present the client certificate of this directory
  // on kube-scheduler's host (ca.crt verifies gpusched; client.crt and client.key identify
  // kube-scheduler to gpusched's --client-ca).
  std::string tls_dir;
  // clientConnection.kubeconfig: kube-scheduler ignores its --kubeconfig flag once it reads a
  // configuration file, so a host kube-scheduler must find its credentials here. "" writes an
  // empty value (the pod's service account); nullopt writes no clientConnection.
  std::optional<std::string> scheduler_kubeconfig;
  std::string lease;           // "NAMESPACE/NAME": leader election on this Lease; empty: defaults
  std::string scheduler_name;  // a profile of this name; empty: the default profile only
  std::vector<ManagedResource> resources;  // in the order to list them
  std::vector<std::string> header;         // comment lines written first (without "# ")
};

// The problems of `spec` kube-scheduler would refuse or that would fail quietly: a URL that is not
// http(s)://host[:port][/path], https without TLS files (or TLS files over http), a resource
// name that is no Kubernetes resource name, a Lease not written NAMESPACE/NAME.
Problems CheckSchedulerConfigSpec(const SchedulerConfigSpec& spec);

// The configuration, with a comment on each line that is a choice. `spec` must have no problems.
std::string WriteSchedulerConfig(const SchedulerConfigSpec& spec);

struct AdvertisedResources {
  std::map<std::string, int> nodes;  // GPU resource -> nodes advertising it (capacity/allocatable)
  std::vector<std::string> refused;  // names no registration may carry (hostile or malformed),
                                     // control characters replaced by '?'
};
// The GPU resources (as `names` tells them) the nodes of `snapshot` advertise.
AdvertisedResources AdvertisedGpuResources(const ClusterSnapshot& snapshot,
                                           const GpuResourceNames& names);

// nvidia.com/gpu, nvidia.com/gpu.shared and every known MIG profile (KnownMigProducts), then the
// names of `advertised` (resource -> nodes advertising it) and `extra` not among them, sorted.
std::vector<ManagedResource> ManagedGpuResources(const std::map<std::string, int>& advertised,
                                                 const std::vector<std::string>& extra,
                                                 bool include_known);

}  // namespace gpusched
