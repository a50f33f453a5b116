// ExtenderService: answers the extender verbs for decoded requests, against the current cluster
// snapshot and engine. It maps wire node lists to node states and engine verdicts back to wire
// results, and knows nothing of HTTP.
//
// Names mode (nodeCacheCapable: true): nodes come from the snapshot; a name it lacks fails with
// "node not in gpusched inventory" when the pod asks for GPUs. Full-Nodes mode: each node is built
// from the object in the request, with the usage the snapshot records for that name (none if
// unknown), and passing node objects are echoed back unchanged.
// With the policy's filterBestOnly, Filter passes only the best-scored of the passing nodes and
// reports the others as unschedulable (the engine's best-only step, kNotBestReason); a node the
// inventory lacks goes too when a known node passes.
// The request's known nodes are handed to the engine as one candidate list, and its answers are
// put back in request order once. Prioritize answers with the lowest score of the request taken
// off every node and names only the nodes left above 0: kube-scheduler's choice is the same (every
// node it scores moves by one amount; a node missing from the answer gets nothing, as one scored
// 0), for a fraction of the entries it would decode.
// With an AssumptionSink, the node kube-scheduler will bind the pod to, as far as gpusched can
// tell, is reported at once: the only passing node of a Filter, or the single best-scored node of
// a Prioritize (kube-scheduler skips Prioritize when one node is feasible).
// The pod's profile in the current policy picks the engine. With a Metrics, every call counts its
// decision under the profile, and Filter counts rejected nodes by plugin (unknown names under
// "inventory"). Thread-safe: each call reads the snapshot and the policy once.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "gpusched/cluster/assumption_sink.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/codec/extender_types.h"
#include "gpusched/engine/engine.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/published.h"

namespace gpusched {

inline constexpr std::string_view kUnknownNodeReason = "node not in gpusched inventory";
inline constexpr std::string_view kInventoryRejection = "inventory";

class ExtenderService {
 public:
  // Borrows all (`metrics` and `assumptions` may be null); they must outlive the service.
  ExtenderService(const Published<ClusterSnapshot>& snapshots, const Published<Policy>& policies,
                  Metrics* metrics = nullptr, AssumptionSink* assumptions = nullptr);

  ExtenderFilterResult Filter(const ExtenderArgs& args) const;
  HostPriorityList Prioritize(const ExtenderArgs& args) const;

 private:
  const Published<ClusterSnapshot>& snapshots_;
  const Published<Policy>& policies_;
  Metrics* metrics_;
  AssumptionSink* assumptions_;
};

// The prioritize answer for `scores` (0..10, one per name, request order): the lowest taken off
// each, and only the names left above 0, in order.
std::vector<HostPriority> LeanPriorities(std::span<const std::string_view> names,
                                         std::span<const int64_t> scores);

}  // namespace gpusched
