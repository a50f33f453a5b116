// explain: why a pod would go where it goes. Runs the pod's profile over every node of a snapshot
// and reports, per node, the verdict, the reason and each plugin's score, then the ranking.
// The same engine the server uses; nothing is scored twice in different ways. Where a unit of
// nvidia.com/gpu is a replica or a MIG slice rather than a GPU, the node's line says so. With a
// blend, also what kube-scheduler makes of the extender scores: its own NodeResourcesFit and
// BalancedAllocation scores plus the extender's score x weight x 10, and the node it would pick.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/packing/in_tree_scores.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

struct NodeExplanation {
  std::string node;
  NodeEvaluation evaluation;  // its verdict's reason points into the finished cycle: use `reason`
  std::string reason;
  // Where the pod asks for nvidia.com/gpu and the node's unit of it is no whole GPU (GpuUnitOf):
  // what one unit is there, e.g. "nvidia.com/gpu here is a time-slicing replica, 4 per GPU".
  std::optional<GpuUnit> gpu_unit;
  std::string unit_note;
};

struct BlendSettings {
  InTreeScore in_tree = InTreeScore::kLeastAllocated;
  double extender_weight = 5;
};

// One passing node's total in kube-scheduler's sum (its other default score plugins score
// every node alike when no pod asks for affinity, spread or images).
struct BlendedScore {
  size_t node = 0;               // index into Explanation::nodes
  bool resources_known = false;  // the inventory has the node's cpu and memory
  int64_t fit = 0;               // both 0 unless resources_known
  int64_t balanced = 0;
  double extender = 0;  // extender score x weight x 10
  double total = 0;
};

struct Explanation {
  std::string pod;  // namespace/name
  std::string profile;
  std::string policy_source;
  ResourceList gpu_demand;             // with what its DRA claims ask for
  std::string dra_unmodelled;          // why its DRA claims are not modelled; empty when they are
  std::vector<NodeExplanation> nodes;  // in snapshot (name) order
  std::vector<size_t> ranking;         // indices into nodes: passing nodes, best first
  std::vector<std::string> plugins;    // scoring plugins that applied, in order
  std::optional<BlendSettings> blend;
  std::vector<BlendedScore> blended;  // with a blend: passing nodes, highest total first
  // What gpusched's admission webhook writes (or wrote) into the pod's node affinity, and why
  // (admission/pod_mutator.h); empty for a pod without GPU resources.
  std::string node_affinity;
};

Explanation Explain(const Policy& policy, const ClusterSnapshot& snapshot, const PodInfo& pod,
                    std::optional<BlendSettings> blend = std::nullopt);

std::string FormatExplanationText(const Explanation& e);
std::string FormatExplanationJson(const Explanation& e);

}  // namespace gpusched
