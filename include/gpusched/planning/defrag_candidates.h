// DefragCandidates: the bound GPU pods a defragmentation plan may move, kept as the plans so far
// leave them (which node each is on, what each disruption budget still allows), and the rules of
// gpusched/planning/defrag_plan.h that decide whether one may move off a node for a waiting pod.
// Pods are numbered in the order given (the indices NodePlan and the search use). Not
// synchronized; the policy, snapshot, pods and budgets must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// A bound GPU pod as the plans move it.
struct BoundPod {
  const PodInfo* pod = nullptr;
  size_t node = 0;  // index into the snapshot's nodes, where the plans so far leave it
  int64_t gpu_milli = 0;
  std::string name;                            // namespace/name
  std::optional<std::vector<size_t>> budgets;  // indices of the budgets selecting it, once asked
};

class DefragCandidates {
 public:
  // The non-terminal GPU pods of `bound` on the snapshot's nodes (the others are left out).
  DefragCandidates(const Policy& policy, const ClusterSnapshot& snapshot,
                   std::span<const PodInfo> bound, std::span<const DisruptionBudget> budgets);

  const BoundPod& pod(size_t b) const { return pods_[b]; }
  // The pods on node `node` (a snapshot index), as the plans so far leave them.
  const std::vector<size_t>& on_node(size_t node) const { return on_node_[node]; }

  // Why pod `b` may not move off `target` for `waiting` (one short phrase); nullopt when it may.
  std::optional<std::string> WhyStays(size_t b, const PodInfo& waiting, size_t target);
  // The pods on `target` that may move off it for `waiting`; each that may not is counted in
  // `stays` under why.
  std::vector<size_t> MovableOff(size_t target, const PodInfo& waiting,
                                 std::map<std::string, size_t>& stays);
  // `movable` with the pods that free the most of `demand` first, then the most GPUs, then by
  // name (so searches are deterministic), cut at `limit`.
  void Rank(std::vector<size_t>& movable, const ResourceList& demand, size_t limit) const;
  // Whether the budgets of the pods `moved` allow all of them at once.
  bool BudgetsAllow(std::span<const size_t> moved);
  // Records pod `b` moved to node `to`: it leaves its node and takes one disruption of each of
  // its budgets.
  void Move(size_t b, size_t to);

 private:
  const std::vector<size_t>& BudgetsOf(size_t b);
  bool ReplicaElsewhere(size_t b, size_t target) const;

  std::span<const DisruptionBudget> budgets_;
  std::vector<BoundPod> pods_;
  std::vector<std::vector<size_t>> on_node_;                            // per node, its bound pods
  std::unordered_map<std::string, std::vector<size_t>> by_controller_;  // namespace/uid
  std::map<std::string, std::vector<size_t>, std::less<>> budgets_by_namespace_;
  std::vector<int64_t> budget_left_;
};

// Milli-GPU that `pod` holds: whole nvidia.com/gpu units plus MIG slices by their compute slices;
// time-sliced replicas count 0.
int64_t PodGpuMilli(const PodInfo& pod);

}  // namespace gpusched
