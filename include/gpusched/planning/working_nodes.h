// WorkingNodes: a snapshot's nodes as a what-if changes them (pods placed, pods moved away),
// without copying the nodes it leaves alone; and where the verbs would place a pod on them.
//
// Every node is the snapshot's own until Mutable copies it. A changed node i takes the content
// class class_count() + i, one of its own past the snapshot's (gpusched/engine/candidates.h), so
// the engine judges it afresh instead of reusing its old class's answer; what an engine cycle keeps
// per class must not outlive a change, so BestPlacement starts a cycle per call. A what-if charges
// and uncharges a node's pods with ChargePod and UnchargePod (gpusched/model/pod_charge.h), the
// rule the ledger counts bound pods by. Used by the defragmentation plan; capacity's counts charge
// copies of single nodes the same way. Not synchronized; the snapshot must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

class WorkingNodes {
 public:
  explicit WorkingNodes(const ClusterSnapshot& snapshot);

  const ClusterSnapshot& snapshot() const { return snapshot_; }
  size_t size() const { return nodes_.size(); }
  const NodeState& node(size_t i) const { return *nodes_[i]; }
  // Node i, copied on first use so the snapshot's stays as it was.
  NodeState& Mutable(size_t i);
  // Every node with its class, for Engine::Filter and Prioritize.
  Candidates candidates() const;

 private:
  const ClusterSnapshot& snapshot_;
  std::vector<std::unique_ptr<NodeState>> copies_;
  std::vector<const NodeState*> nodes_;
  std::vector<uint32_t> classes_;
};

// Where the engine `selection` names would place `pod` on `nodes` now, as the verbs judge it:
// Engine::Filter over every node, Engine::Prioritize over those that pass, less `excluded` (node
// indices, ascending), the best score, the first in node order among equals. nullopt when no node
// passes.
std::optional<size_t> BestPlacement(const Policy::Selection& selection, const PodInfo& pod,
                                    const WorkingNodes& nodes,
                                    std::span<const size_t> excluded = {});

}  // namespace gpusched
