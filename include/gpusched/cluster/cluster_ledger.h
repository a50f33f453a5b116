// ClusterLedger: the writer's side of the cluster state. It holds nodes and the GPU-requesting pods
// bound to them, keeps per-node usage, and builds ClusterSnapshots for readers.
//
// Accounting rule: a pod counts against its node while spec.nodeName is set and its phase is not
// Succeeded or Failed; deleting it or a terminal phase releases its GPUs at once. Pods are keyed by
// PodKey (gpusched/model/pod.h), so replaying an event never double-counts.
// Only GPU requests are kept per pod.
//
// Assumptions: a pod the extender expects kube-scheduler to bind (its best-ranked node) counts
// against that node until the watch reports the pod bound (the report then takes over, on
// whatever node), terminal or deleted, or until the assumption expires. A report of the pod still
// unbound leaves the assumption standing: the watch may lag the scheduler. The assumptions are
// the scheduler's, not any client's: only a GPU pod the watch knows as pending and unbound can be
// assumed, with the requests the watch reports (not what a request claims), so their number and
// memory are bounded by the watched pods. A pod holds at most one assumption; a later one replaces
// it, and none outlasts the window of the pod's first (ttl from then): a pod retried for ever
// cannot keep a node's GPUs from others. Snapshots carry each assumption, so a pod judged again is
// not judged against its own (ClusterSnapshot::AssumptionOf).
//
// The observed workload is every GPU pod seen (first sighting, bound or pending), counted with
// exponential decay and pinned to the GPU product its node selector names; the standard workload
// follows the node sizes
// (gpusched/packing/target_workload.h).
//
// Not thread-safe: one writer thread owns it; snapshots it builds are immutable and may be handed
// to any thread.
#ifndef GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_
#define GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/packing/target_workload.h"

namespace gpusched {

class ClusterLedger {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ClusterLedger(GpuResourceNames gpu_names,
                         Clock::duration workload_half_life = std::chrono::hours(1));

  void UpsertNode(NodeInfo node);
  void DeleteNode(std::string_view name);
  void UpsertPod(const PodInfo& pod);
  // `key` is what PodKey() returns for the pod.
  void DeletePod(std::string_view key);
  // A fresh full list: upserts every entry and deletes what the list no longer has.
  void ReplaceNodes(std::vector<NodeInfo> nodes);
  void ReplacePods(const std::vector<PodInfo>& pods);
  enum class AssumeResult {
    kApplied,     // the pod now counts against the node
    kUnknownPod,  // the watch has not reported this pod (yet)
    kRefused,     // bound, terminal, no GPU request, or its window is over
  };
  // Counts the watched pod `key` (PodKey) against `node` until now + ttl, or until its window
  // ends (see Assumptions above).
  AssumeResult Assume(std::string_view key, std::string_view node, Clock::time_point now,
                      Clock::duration ttl);
  // Drops the assumption of pod `key`, if any (its scheduling cycle is being retried); returns
  // whether the usage changed.
  bool Forget(std::string_view key);
  // Drops assumptions that expired by `now`; returns how many.
  size_t ExpireAssumptions(Clock::time_point now);

  // A snapshot of the current state; nodes unchanged since the last call are shared with it.
  std::shared_ptr<const ClusterSnapshot> BuildSnapshot();

  size_t node_count() const { return nodes_.size(); }
  // GPU-requesting pods currently known, in any phase: pending, bound, finished.
  size_t gpu_pods_known() const { return pods_.size(); }
  size_t assumed_count() const { return assumed_keys_.size(); }

 private:
  struct PodRecord {
    std::string node_name;
    ResourceList gpu_requests;
    bool counted = false;
    bool terminal = false;
    std::optional<Clock::time_point> assumed_until;  // set while counted by assumption only
    std::optional<Clock::time_point> assume_window;  // no assumption of this pod lasts past it
  };
  struct Usage {
    ResourceList used;
    int32_t pods = 0;
  };

  // The standard workload (StandardShapes) of the most common whole-GPU node sizes and the MIG
  // profiles offered by the most nodes, at most kMaxStandardSizes of each: the cost of every
  // scored node grows with its shapes.
  static constexpr size_t kMaxStandardSizes = 8;
  std::vector<WeightedShape> StandardWorkload() const;
  void Charge(const PodRecord& pod, int sign);
  // Back to the watch's view of the pending pod `record`: uncharged, unassumed.
  void Unassume(const std::string& key, PodRecord& record);
  // Counts a GPU pod seen for the first time in the observed workload, pinned to the product its
  // node selector names.
  void Observe(const ResourceList& gpu_requests, const std::string& product);
  // Replaces the record of `key` (uncharging the old one) with `record`, charged; `product` is
  // the pod's pinned GPU product, for Observe.
  void Put(std::string key, PodRecord record, const std::string& product);

  GpuResourceNames gpu_names_;
  std::map<std::string, NodeInfo, std::less<>> nodes_;
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, Usage> usage_;
  std::set<std::string, std::less<>> dirty_;
  std::map<std::string, std::shared_ptr<const NodeState>, std::less<>> published_;
  DecayedShapeCounts observed_;
  std::set<std::string, std::less<>> assumed_keys_;  // pods counted by assumption
  uint64_t generation_ = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_CLUSTER_CLUSTER_LEDGER_H_
