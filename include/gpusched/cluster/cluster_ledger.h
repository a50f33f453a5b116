// ClusterLedger: the writer's side of the cluster state. It holds nodes and the GPU-requesting pods
// bound to them, keeps per-node usage, and builds ClusterSnapshots for readers.
//
// Accounting rule: a pod counts against its node while spec.nodeName is set and its phase is not
// Succeeded or Failed; deleting it or a terminal phase releases its GPUs at once. Pods are keyed by
// UID (namespace/name when a static file gives none), so replaying an event never double-counts.
// Only GPU requests are kept per pod. Not thread-safe: one writer thread owns it; snapshots it
// builds are immutable and may be handed to any thread.
#ifndef GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_
#define GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

class ClusterLedger {
 public:
  explicit ClusterLedger(GpuResourceNames gpu_names);

  void UpsertNode(NodeInfo node);
  void DeleteNode(std::string_view name);
  void UpsertPod(const PodInfo& pod);
  // `key` is what PodKey() returns for the pod.
  void DeletePod(std::string_view key);
  // A fresh full list: upserts every entry and deletes what the list no longer has.
  void ReplaceNodes(std::vector<NodeInfo> nodes);
  void ReplacePods(const std::vector<PodInfo>& pods);

  // A snapshot of the current state; nodes unchanged since the last call are shared with it.
  std::shared_ptr<const ClusterSnapshot> BuildSnapshot();

  size_t node_count() const { return nodes_.size(); }
  // GPU-requesting pods currently known (bound or not, terminal or not).
  size_t pod_count() const { return pods_.size(); }
  // Usage charged to `node`, whether or not the node itself is known yet.
  ResourceList UsageOf(std::string_view node) const;

  static std::string PodKey(const PodInfo& pod);

 private:
  struct PodRecord {
    std::string node_name;
    ResourceList gpu_requests;
    bool counted = false;
  };
  struct Usage {
    ResourceList used;
    int32_t pods = 0;
  };

  void Charge(const PodRecord& pod, int sign);

  GpuResourceNames gpu_names_;
  std::map<std::string, NodeInfo, std::less<>> nodes_;
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, Usage> usage_;
  std::set<std::string, std::less<>> dirty_;
  std::map<std::string, std::shared_ptr<const NodeState>, std::less<>> published_;
  std::map<int64_t, int64_t> whole_gpu_requests_;  // GPUs per pod -> counted pods asking that
  uint64_t generation_ = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_
