#include "gpusched/planning/working_nodes.h"

#include <algorithm>

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
  return Candidates{nodes_, classes_, snapshot_.class_count() + nodes_.size(), {}};
}

std::optional<size_t> BestPlacement(const Policy::Selection& selection, const PodInfo& pod,
                                    const WorkingNodes& nodes, std::span<const size_t> excluded) {
  const Candidates all = nodes.candidates();
  auto cycle = selection.OpenCycle(pod, nodes.snapshot());
  std::vector<Verdict> verdicts = selection.engine->Filter(*cycle, all);
  std::vector<const NodeState*> passing;
  std::vector<uint32_t> passing_classes;
  std::vector<size_t> passing_index;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].passed() || std::binary_search(excluded.begin(), excluded.end(), i)) {
      continue;
    }
    passing.push_back(all.nodes[i]);
    passing_classes.push_back(all.classes[i]);
    passing_index.push_back(i);
  }
  if (passing.empty()) return std::nullopt;
  std::vector<int64_t> scores = selection.engine->Prioritize(
      *cycle, Candidates{passing, passing_classes, all.class_count, {}});
  return passing_index[static_cast<size_t>(std::max_element(scores.begin(), scores.end()) -
                                           scores.begin())];
}

}  // namespace gpusched
