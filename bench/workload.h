// Benchmark workloads: a synthetic cluster loaded into a snapshot, and the extender requests
// kube-scheduler would send for it in both nodeCacheCapable modes.
#pragma once

#include <memory>
#include <string>

#include "gpusched/app/server_app.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/policy/policy.h"

namespace gpusched::bench {

struct Workload {
  int nodes = 0;
  double occupancy = 0;
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::string names_request;  // nodeCacheCapable: true, every node name
  std::string nodes_request;  // nodeCacheCapable: false, the candidates kube-scheduler would send
  int full_node_candidates = 0;
  size_t nodes_request_bytes = 0;
};

// kube-scheduler's numFeasibleNodesToFind with the default adaptive percentage: all nodes below
// 100, else max(5, 50 - n/125) percent, at least 100.
int FeasibleNodesToFind(int nodes);

// What the nodes' usage looks like to the engine, which judges one node per class of equal
// content (gpusched/cluster/cluster_snapshot.h).
enum class NodeUsage {
  kRepeating,  // the synthetic pods alone: nodes of equal GPU and CPU use repeat
  kDistinct,   // plus one small CPU-only pod per node, of a size no other node has
};

// How the nodes offer whole GPUs, and how the pods ask for them.
enum class GpuSource {
  kDevicePlugin,  // nvidia.com/gpu in the nodes' allocatable and the pods' requests
  kDra,           // ResourceSlices in NVIDIA's layout (full GPUs), NVIDIA's DeviceClass, and a
                  // ResourceClaim per pod: allocated for the bound ones, pending for the request's
};

// `nodes` nodes, 10 pods per node, GPUs about `occupancy` used. The pod asks for 1 GPU and is
// shaped like the captured vLLM pod in the extender fixtures. MIG and time-sliced nodes keep their
// device-plugin resources under kDra (NVIDIA's driver publishes MIG devices too; not here).
Workload MakeWorkload(int nodes, double occupancy, uint64_t seed = 42,
                      NodeUsage usage = NodeUsage::kRepeating,
                      GpuSource gpus = GpuSource::kDevicePlugin);

// The extender over a workload's snapshot as `gpusched serve` runs it (a ServerApp with a static
// inventory source), counting its decisions in the metrics unless `count_decisions` is false.
// Nothing listens until Bind(); the verbs' listener takes any free port on 127.0.0.1, with
// `server`'s other settings.
std::unique_ptr<ServerApp> MakeServerApp(const Workload& w,
                                         const PolicySpec& policy = DefaultPolicySpec(),
                                         bool count_decisions = true,
                                         ServerOptions server = ServerOptions());

}  // namespace gpusched::bench
