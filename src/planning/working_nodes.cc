#include "gpusched/planning/working_nodes.h"

#include <algorithm>

#include "gpusched/engine/node_subset.h"

namespace gpusched {

WorkingNodes::WorkingNodes(const ClusterSnapshot& snapshot)
    : snapshot_(snapshot),
      copies_(snapshot.size()),
      classes_(snapshot.classes().begin(), snapshot.classes().end()) {
  nodes_.reserve(snapshot.size());
  for (const auto& node : snapshot.nodes()) nodes_.push_back(node.get());
}

NodeState& WorkingNodes::Mutable(size_t i) {
  if (!copies_[i]) {
    copies_[i] = std::make_unique<NodeState>(*nodes_[i]);
    nodes_[i] = copies_[i].get();
    classes_[i] = static_cast<uint32_t>(snapshot_.class_count() + i);
  }
  return *copies_[i];
}

Candidates WorkingNodes::candidates() const {
  return Candidates{nodes_, classes_, snapshot_.class_count() + nodes_.size(), {}, {}};
}

std::optional<size_t> BestPlacement(const Policy::Selection& selection, const PodInfo& pod,
                                    const WorkingNodes& nodes, std::span<const size_t> excluded) {
  const Candidates all = nodes.candidates();
  auto cycle = selection.OpenCycle(pod, nodes.snapshot());
  std::vector<Verdict> verdicts = selection.engine->Filter(*cycle, all);
  const NodeSubset passing = SubsetOf(all, [&](size_t i) {
    return verdicts[i].passed() && !std::binary_search(excluded.begin(), excluded.end(), i);
  });
  if (passing.empty()) return std::nullopt;
  std::vector<int64_t> scores = selection.engine->Prioritize(*cycle, passing.candidates());
  return passing.positions[static_cast<size_t>(std::max_element(scores.begin(), scores.end()) -
                                               scores.begin())];
}

}  // namespace gpusched
