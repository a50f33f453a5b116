// why-pending: the GPU pods waiting for a node (ClusterSnapshot::gpu_pods().pending: no node, not
// terminal), grouped by shape and by the reason their scheduling fails on the best-looking nodes,
// gpusched's filter's or kube-scheduler's (below), with counts and the oldest wait.
//
// Each pod is judged on the way kube-scheduler takes, so its reason is the text the pod's
// FailedScheduling events quote. kube-scheduler first filters out the nodes that do not meet the
// pod's required node pins (nodeSelector and required node affinity, on the labels gpusched keeps,
// gpusched/model/node_pins.h; those it does not keep count as met): no node left gives
// kNoPinnedNodeReason, the text of its NodeAffinity. Every other node is judged by the engine of
// the profile the policy selects for the pod (Policy::Select), Engine::Filter, whose reasons are
// the very text of the extender's failedNodes; but where a GPU resource the pod asks for is short
// (allocatable less what bound and assumed pods use), kube-scheduler's own NodeResourcesFit
// rejects the node before the extender sees it (the README's registration leaves GPU resources to
// it, ignoredByScheduler: false), so the node's reason is its "Insufficient <resource>", whether
// the node offers none or all are in use. kube-scheduler's other filters (cpu, memory, taints) are
// not applied.
//
// "Best-looking" nodes are those that came closest to taking the pod. A pod that passes gpusched's
// filter on some node gets kPassesReason (what holds it back is kube-scheduler's own, its queue or
// the bind). Otherwise the nodes are ranked by the engine's verdict and the best non-empty tier is
// taken:
//   a. unschedulable (FailedNodes): only what other pods use stands in the way;
//   b. unresolvable, but the node offers every GPU resource the pod asks for (allocatable > 0);
//   c. every other node.
// The pod's reason is the most common reason among the nodes of that tier, ties broken by the
// reason's text (byte order), so equal inputs give equal reports. A pod the snapshot counts as
// assumed on a node (the extender chose it; the bind is pending) gets kAssumedReason; in a cluster
// of no node, every pod gets kNoNodesReason.
//
// Autoscaler: whether a node autoscaler (cluster-autoscaler, Karpenter), which simulates only
// kube-scheduler's own filters, will add a node for the pod. kAutoscalerBlind when some node that
// meets the pod's pins and has every GPU resource it asks for free is refused by gpusched: the
// autoscaler takes the pod as fitting there and adds nothing. kAutoscalerSees otherwise. Either
// way followed by whether gpusched's admission webhook wrote the pod's rules into its affinity
// (the gpusched.io/node-affinity annotation, admission/pod_mutator.h); pins on labels gpusched does
// not keep (the platforms' labels of that affinity among them) count as met, as above; and, when
// a placeholder pod stands for it (planning/placeholder_plan.h), its name. "-" for a pod that
// passes gpusched's filter somewhere or is assumed.
//
// Shape: the pod's GPU demand under the policy's GPU resource names, each resource as
// "<name>: <units>", joined with ", " in name order ("nvidia.com/gpu: 8").
//
// Bounds: pods are judged oldest first (creation time, unknown last, then namespace and name), at
// most `max_pods` of them and at most `max_node_judgements` / nodes, so the work is at most
// max_node_judgements node verdicts however large the cluster (the engine judges a content class
// once, so usually far fewer plugin calls). Pods past the cap are counted under their shape with
// kNotJudgedReason and in `skipped`. Each group keeps at most `max_sample` pod names, the oldest.
// A Cancellation (options) stops the work before the next pod; the report then says so.
//
// The report holds names and reasons as read (pod names, shapes, reasons quoting annotations);
// they are quoted (QuoteForMessage: printable ASCII) and bounded where the report is written out
// (why_pending_format.h), in the text, the JSON and the gauges alike.
//
// Pure functions over an immutable snapshot and policy; thread-safe. Never run on a verb's thread:
// thousands of pending pods over thousands of nodes take seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/cancellation.h"

namespace gpusched {

inline constexpr std::string_view kPassesReason =
    "passes gpusched's filter on some node (kube-scheduler's own checks, its queue or the bind "
    "hold it)";
inline constexpr std::string_view kAssumedReason =
    "assumed on a node by gpusched, waiting for kube-scheduler to bind it";
inline constexpr std::string_view kNoPinnedNodeReason =
    "node(s) didn't match Pod's node affinity/selector";
// kube-scheduler's text when the cluster has no node at all.
inline constexpr std::string_view kNoNodesReason = "no nodes available to schedule pods";
inline constexpr std::string_view kAutoscalerBlind =
    "no node added: kube-scheduler's own filters fit an existing node gpusched refuses";
inline constexpr std::string_view kAutoscalerSees =
    "unschedulable to kube-scheduler's own filters too: an autoscaler can add a node";
inline constexpr std::string_view kNotJudgedReason =
    "not judged: more pending pods than the report judges";

struct WhyPendingOptions {
  size_t max_pods = 2000;
  size_t max_node_judgements = 20'000'000;
  size_t max_sample = 5;
  int64_t now_unix = 0;                        // for the waits; 0: the system clock
  const Cancellation* cancellation = nullptr;  // checked before each pod; null: never cancelled
};

struct PendingGroup {
  std::string shape;
  std::string reason;
  std::string autoscaler;  // kAutoscalerBlind or kAutoscalerSees with the webhook's part, or "-"
  size_t pods = 0;
  int64_t oldest_created_unix = 0;  // 0: no pod of the group has a creation time
  std::vector<std::string> sample;  // namespace/name, oldest first
};

struct WhyPendingReport {
  std::string inventory;  // where the snapshot came from, for the heading; set by the caller
  std::string policy_source;
  int64_t now_unix = 0;  // the waits are measured to this moment
  size_t pending = 0;    // pending GPU pods in the snapshot
  size_t judged = 0;
  size_t skipped = 0;  // past the caps (kNotJudgedReason)
  // By pods (most first), then shape, reason and autoscaler note.
  std::vector<PendingGroup> groups;
  bool cancelled = false;  // the Cancellation stopped it: incomplete, not to be shown

  // Seconds `group` has waited at now_unix; -1 when unknown.
  int64_t OldestWait(const PendingGroup& group) const;
};

// The report for `snapshot`'s pending GPU pods under `policy`.
WhyPendingReport ComputeWhyPending(const Policy& policy, const ClusterSnapshot& snapshot,
                                   const WhyPendingOptions& options = {});

// `pending` in the order pods are judged: oldest first, unknown creation times last, then as
// given (the snapshot's namespace and name order).
std::vector<const PodInfo*> OldestFirst(const std::vector<PodInfo>& pending);

// One pending pod judged on the way kube-scheduler takes (above): the nodes that meet its required
// pins, the engine's verdicts on them (Engine::Filter, one per node) and its GPU demand under its
// profile. Empty nodes when the snapshot has none or none meets the pins.
struct PendingJudgement {
  std::vector<const NodeState*> nodes;
  std::vector<Verdict> verdicts;  // their reasons live in the cycle below
  ResourceList demand;
  std::unique_ptr<Cycle> cycle;  // null when no node was judged

  bool passes_somewhere() const;
};
PendingJudgement JudgePendingPod(const Policy& policy, const ClusterSnapshot& snapshot,
                                 const PodInfo& pod);

// The nodes of `judged` an autoscaler takes the pod as fitting but gpusched refuses (the
// Autoscaler rule above: the pins hold, no GPU resource the pod asks for is short), at most `max`.
std::vector<const NodeState*> AutoscalerBlindNodes(const PendingJudgement& judged,
                                                   size_t max = SIZE_MAX);

// The tier rule above (a, b, c) for one pod: `verdicts` are Engine::Filter's over `nodes`,
// `demand` the pod's GPU demand.
std::string BestLookingReason(std::span<const NodeState* const> nodes,
                              std::span<const Verdict> verdicts, const ResourceList& demand);

}  // namespace gpusched
