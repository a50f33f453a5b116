// NodeSubset: some nodes of a longer list (a snapshot's, a request's, the Candidates of one engine
// call), each with its position in that list, and the Candidates an engine call judges them as.
// The one form such a subset takes: the engine's passing nodes, BestPlacement's, the extender's
// nodes the snapshot knows and the simulator's feasible nodes.
//
// positions and nodes are parallel; classes, names and numbers are empty or parallel to them, and
// class_count numbers the classes as Candidates::class_count does. Positions keep the order the
// nodes were added in (ascending when taken from a list in order; the simulator's rotate). The
// nodes and the text of the names must outlive it. Value type; not synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpusched/engine/candidates.h"
#include "gpusched/model/node.h"

namespace gpusched {

struct NodeSubset {
  std::vector<size_t> positions;  // each node's position in the full list
  std::vector<const NodeState*> nodes;
  std::vector<uint32_t> classes;  // empty, or one per node
  size_t class_count = 0;
  std::vector<std::string_view> names;  // empty, or one per node
  std::vector<uint32_t> numbers;        // empty, or one per node (Candidates::numbers)

  size_t size() const { return nodes.size(); }
  bool empty() const { return nodes.empty(); }
  Candidates candidates() const { return {nodes, classes, class_count, names, numbers}; }

  // The node at `position` of the full list; its class, name and number, when the subset keeps
  // them, are the caller's to add.
  void Add(size_t position, const NodeState* node) {
    positions.push_back(position);
    nodes.push_back(node);
  }
  // Empties it, keeping the storage for the next use.
  void Clear() {
    positions.clear();
    nodes.clear();
    classes.clear();
    names.clear();
    numbers.clear();
  }
};

// The nodes of `all` whose position passes `keep`, with their classes, names and numbers when `all`
// has them.
template <class Keep>
NodeSubset SubsetOf(const Candidates& all, Keep&& keep) {
  NodeSubset out;
  out.class_count = all.class_count;
  for (size_t i = 0; i < all.nodes.size(); ++i) {
    if (!keep(i)) continue;
    out.Add(i, all.nodes[i]);
    if (!all.classes.empty()) out.classes.push_back(all.classes[i]);
    if (!all.names.empty()) out.names.push_back(all.names[i]);
    if (!all.numbers.empty()) out.numbers.push_back(all.numbers[i]);
  }
  return out;
}

}  // namespace gpusched
