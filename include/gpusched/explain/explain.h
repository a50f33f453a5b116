// explain: why a pod would go where it goes. Runs the pod's profile over every node of a snapshot
// and reports, per node, the verdict, the reason and each plugin's score, then the ranking.
// The same engine the server uses; nothing is scored twice in different ways.
#ifndef GPUSCHED_EXPLAIN_EXPLAIN_H_
#define GPUSCHED_EXPLAIN_EXPLAIN_H_

#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/engine.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

struct NodeExplanation {
  std::string node;
  NodeEvaluation evaluation;  // its verdict's reason points into the finished cycle: use `reason`
  std::string reason;
};

struct Explanation {
  std::string pod;  // namespace/name
  std::string profile;
  std::string policy_source;
  ResourceList gpu_demand;
  std::vector<NodeExplanation> nodes;  // in snapshot (name) order
  std::vector<size_t> ranking;         // indices into nodes: passing nodes, best first
  std::vector<std::string> plugins;    // scoring plugins that applied, in order
};

Explanation Explain(const Policy& policy, const ClusterSnapshot& snapshot, const PodInfo& pod);

std::string FormatExplanationText(const Explanation& e);
std::string FormatExplanationJson(const Explanation& e);

}  // namespace gpusched

#endif  // GPUSCHED_EXPLAIN_EXPLAIN_H_
