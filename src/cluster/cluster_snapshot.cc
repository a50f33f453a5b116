#include "gpusched/cluster/cluster_snapshot.h"

namespace gpusched {

ClusterSnapshot::ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation)
    : nodes_(std::move(nodes)), generation_(generation), built_at_(std::chrono::steady_clock::now()) {
  by_name_.reserve(nodes_.size());
  for (const auto& n : nodes_) by_name_.emplace(n->info.name, n.get());
}

const NodeState* ClusterSnapshot::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace gpusched
