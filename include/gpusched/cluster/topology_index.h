// TopologyIndex: every node of one snapshot numbered into its domain at each topology level
// (model/topology.h), and each domain's nodes, so that placement reads a node's domain as an array
// lookup instead of its labels.
//
// A snapshot builds one per set of levels on first use (ClusterSnapshot::TopologyFor) and keeps it
// for its life: topology labels change only when a node does, which makes a new snapshot. Domain
// names view the snapshot's node labels, which the snapshot outlives the index with. Built in one
// pass over the nodes per level; immutable once built; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/topology.h"

namespace gpusched {

class TopologyIndex {
 public:
  static constexpr uint32_t kNoDomain = UINT32_MAX;

  TopologyIndex(std::vector<TopologyLevel> levels,
                std::span<const std::shared_ptr<const NodeState>> nodes);

  const std::vector<TopologyLevel>& levels() const { return levels_; }
  // The domain of the node at snapshot position `node` at `level`, or kNoDomain.
  uint32_t Of(size_t level, size_t node) const { return of_[level][node]; }
  // Domains at `level`, numbered 0..count-1 in order of first appearance.
  size_t count(size_t level) const { return names_[level].size(); }
  // The label value naming a domain (two keys' equal values are two domains of one name).
  std::string_view name(size_t level, uint32_t domain) const { return names_[level][domain]; }
  // The snapshot positions of a domain's nodes, ascending.
  std::span<const uint32_t> Members(size_t level, uint32_t domain) const {
    return members_[level][domain];
  }

 private:
  std::vector<TopologyLevel> levels_;
  std::vector<std::vector<uint32_t>> of_;  // [level][node position]
  std::vector<std::vector<std::string_view>> names_;
  std::vector<std::vector<std::vector<uint32_t>>> members_;  // [level][domain]
};

}  // namespace gpusched
