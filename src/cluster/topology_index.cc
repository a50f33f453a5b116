#include "gpusched/cluster/topology_index.h"

#include <unordered_map>
#include <utility>

namespace gpusched {

TopologyIndex::TopologyIndex(std::vector<TopologyLevel> levels,
                             std::span<const std::shared_ptr<const NodeState>> nodes)
    : levels_(std::move(levels)),
      of_(levels_.size()),
      names_(levels_.size()),
      members_(levels_.size()) {
  for (size_t l = 0; l < levels_.size(); ++l) {
    const TopologyLevel& level = levels_[l];
    // Per key of the level, value -> domain number: equal values of two keys stay apart.
    std::vector<std::unordered_map<std::string_view, uint32_t>> ids(level.keys.size());
    of_[l].assign(nodes.size(), kNoDomain);
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto [k, value] = FirstDomainKey(nodes[i]->info.topology, level);
      if (k == level.keys.size()) continue;
      auto [it, added] = ids[k].try_emplace(value, static_cast<uint32_t>(names_[l].size()));
      if (added) {
        names_[l].push_back(value);
        members_[l].emplace_back();
      }
      of_[l][i] = it->second;
      members_[l][it->second].push_back(static_cast<uint32_t>(i));
    }
  }
}

}  // namespace gpusched
