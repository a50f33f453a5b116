// Candidates: the nodes one engine call judges, with each node's content class as numbered by
// the cycle's ClusterSnapshot (a class at or past its class_count() being one it does not hold).
// Without classes every node is a class of its own. With names, plugins that score by name read
// them there rather than from each node's state (the request's names lie together in memory),
// and with numbers, each node's position in the cycle's snapshot, they need not look names up.
// A view: it owns none of the lists it spans, which must outlive it. Not synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gpusched/cluster/node_index.h"
#include "gpusched/model/node.h"

namespace gpusched {

struct Candidates {
  std::span<const NodeState* const> nodes;
  std::span<const uint32_t> classes;  // empty, or one per node, each < class_count
  size_t class_count = 0;
  std::span<const std::string_view> names;  // empty, or each node's name
  // Empty, or each node's position in the cycle's snapshot (ClusterSnapshot::IndexOf of its
  // name), NodeIndex::kAbsent where it has none.
  std::span<const uint32_t> numbers;

  std::string_view name_of(size_t i) const {
    return names.empty() ? std::string_view(nodes[i]->info.name) : names[i];
  }

  // The node's position in the cycle's snapshot, or NodeIndex::kAbsent when unknown here (a
  // plugin then looks its name up).
  uint32_t number_of(size_t i) const { return numbers.empty() ? NodeIndex::kAbsent : numbers[i]; }

  uint32_t class_of(size_t i) const {
    return classes.empty() ? static_cast<uint32_t>(i) : classes[i];
  }
  size_t classes_size() const { return classes.empty() ? nodes.size() : class_count; }
};

}  // namespace gpusched
