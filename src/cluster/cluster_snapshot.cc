#include "gpusched/cluster/cluster_snapshot.h"

#include <set>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {

ClusterSnapshot::ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation,
                                 std::vector<WeightedShape> target_workload)
    : nodes_(std::move(nodes)),
      target_workload_(std::move(target_workload)),
      generation_(generation),
      built_at_(std::chrono::steady_clock::now()) {
  by_name_.reserve(nodes_.size());
  std::set<std::string, std::less<>> profiles;
  for (const auto& n : nodes_) {
    by_name_.emplace(n->info.name, n.get());
    for (const auto& r : n->info.allocatable) {
      if (r.milli > 0 && !MigProfileOf(r.name).empty()) profiles.emplace(MigProfileOf(r.name));
    }
    std::string_view single = n->info.gpu.single_mig_profile();
    if (!single.empty() && n->info.allocatable.milli(kGpuResource) > 0) profiles.emplace(single);
  }
  offered_mig_profiles_.assign(profiles.begin(), profiles.end());
}

const NodeState* ClusterSnapshot::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace gpusched
