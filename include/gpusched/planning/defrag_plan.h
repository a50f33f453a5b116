// Defragmentation plan: for a GPU pod that waits because no node takes it, but one would if a few
// pods there moved, the fewest pods to move, where each would go, and the GPUs that frees; for a
// member of a pod group that no topology domain has room for, the pods to move out of one domain
// so the whole group fits there (domain plans, below). Advice only: the plan is text or JSON that
// a person or a descheduler acts on; nothing is written.
//
// The judge is the engine the policy picks for each pod, as the verbs use it
// (gpusched/planning/working_nodes.h): the waiting pod fits a node when Engine::Filter passes it
// there; a moved pod goes where BestPlacement puts it among the nodes other than the one it
// leaves, with the moves before it counted. Only nodes that reject the pod as unschedulable (in
// use by other pods) are targets: an unresolvable rejection (no such resource, product pin,
// cordon, maintenance) stands however many pods move.
//
// A pod may move only when all of these hold (a pod that fails one is counted under it):
//  - it is a bound, non-terminal GPU pod on the target node, of a priority no higher than the
//    waiting pod's (spec.priority; equal priority may move: moving is not preemption);
//  - its controller (the ownerReference with controller: true) is a ReplicaSet,
//    ReplicationController or StatefulSet, which recreate a deleted pod wherever it fits. A bare
//    pod would be gone for good, a Job's pod would lose its work, a DaemonSet's comes back on the
//    same node, and other kinds (operators' own) are not known to recreate theirs: none moves;
//  - it has a replica elsewhere: another non-terminal pod of the same controller (same uid) bound
//    to a node other than the target, so the workload keeps serving while this one is recreated.
//    A StatefulSet's pod is judged the same way (its replacement keeps its name and ordinal);
//    gpusched does not see volumes, so a pod bound to a node-local volume would not move;
//  - its PodDisruptionBudgets allow it: every budget that selects it has disruptionsAllowed left,
//    less the moves earlier in the plans (a budget without status allows none), and it is selected
//    by at most one budget (the eviction API refuses a pod under several).
//
// Search, per waiting pod: the target nodes in order of fewest movable pods (they promise the
// fewest moves, and a plan found early caps the search on the others), then node order. On each,
// its movable pods, at most max_candidates_per_node, those holding most of the resources the
// waiting pod asks for first (then most GPUs, then by namespace/name); a node the pod would not fit
// even with all of them gone is dropped after one check. Then subsets of growing size up to
// max_moves, never past the size of the best plan so far: a size whose `size` first pods (those
// that free the most) do not make room is skipped, as no other `size` of them frees more of what
// the pod asks for; otherwise every subset of that size is checked with Engine::Filter on the
// node without those pods, and those that fit are tried in order of fewest GPUs moved (then their
// pods' order): the first whose pods all find a destination, within their budgets, is the node's
// plan. The plan is the node's with the fewest moves, then fewest GPUs moved, then the node's
// name. Bounded work: at most max_subset_checks single-node filter checks and
// max_destination_trials destination searches (each |subset| placements over every node) per
// waiting pod; a search cut short by either says so (`search_cut`), and its plan, if any, may not
// be minimal.
//
// Domain plans (gpusched/planning/defrag_domain.h). A waiting member of a pod group of known size
// (its own PodGroupRef size, else the snapshot's PodGroups) whose missing members (size less those
// bound or assumed) no domain of the gang-topology levels has room for, where gang-topology
// refuses the group whole or would spread it, is planned for its whole group: the domain,
// innermost level first, holding every placed member, where the fewest movable pods (the rules
// above, each judged with its own node as the target) must move, each to a node outside the
// domain, so that the missing members fit there (room as gang-topology counts it). Greedy per
// domain, at most max_domain_moves moves, at most max_domains domains judged, destination
// searches counted against max_destination_trials; `search_cut` when a bound stopped it. The plan
// (kDomainPlan) names the group, the domain, the moves and a node per missing member; the group's
// later waiting members are covered by it (kCovered, each with the next member node) and not
// planned again; without one (kNoPlan) `why` names the group, its size and the domain closest to
// room with its shortfall, and the group's later members refer to it. A pod whose group a domain
// already holds, or of unknown size, is planned as any other pod, and a pod with no domain plan
// that fits now is placed (kFitsNow).
//
// Waiting pods (pending, unbound, not terminal, asking for a GPU resource) are planned in order:
// priority, highest first, then oldest, then namespace/name; at most max_waiting of them. Each
// plan assumes those before it carried out: its moves applied, its pod placed on its target (a
// domain plan: its group's missing members on their member nodes), as a pod that fits now is
// placed where BestPlacement puts it. kube-scheduler's own filters (CPU,
// memory, taints, pod affinity) are not applied, as in capacity.
//
// A pure function of its inputs; thread-safe. Never run on a verb's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/planning/defrag_options.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

struct DefragMove {
  std::string pod;  // namespace/name
  std::string from;
  std::string to;
  int64_t gpu_milli = 0;  // whole GPUs plus MIG slices by compute slices, as capacity counts
};

enum class DefragOutcome {
  kFitsNow,     // a node takes it as things are (`node`)
  kPlan,        // it fits on `node` once `moves` are carried out
  kNoPlan,      // `why`
  kDomainPlan,  // its pod group's missing members fit in `group->domain` once `moves` are done
  kCovered,     // an earlier domain plan of its pod group places it (`group->covered_by`)
};

// The pod group a domain plan places whole, and where.
struct DefragGroupPlan {
  std::string key;
  int32_t size = 0;
  int32_t to_place = 0;  // members not placed yet: size less those bound or assumed
  std::string level;     // kDomainPlan, kCovered: the domain's topology level and name
  std::string domain;
  std::vector<std::string> member_nodes;  // kDomainPlan: the node of each member to place
  std::string covered_by;                 // kCovered: the pod (namespace/name) whose plan it is
};

struct PodDefragPlan {
  std::string pod;  // namespace/name
  std::string profile;
  int32_t priority = 0;
  ResourceList gpu_demand;
  DefragOutcome outcome = DefragOutcome::kNoPlan;
  std::string node;
  std::vector<DefragMove> moves;
  int64_t gpus_freed_milli = 0;  // the moves' GPUs
  bool search_cut = false;       // a bound stopped the search: a plan may not be minimal
  std::string why;               // kNoPlan: one line
  // kDomainPlan, kCovered, and kNoPlan for a pod group no domain could be freed for.
  std::optional<DefragGroupPlan> group;
};

struct DefragReport {
  std::string inventory;  // where the snapshot came from; set by the caller
  std::string policy_source;
  size_t budgets = 0;          // disruption budgets read
  size_t budgets_skipped = 0;  // unreadable objects; set by the caller
  size_t waiting = 0;          // waiting GPU pods considered (before max_waiting)
  std::vector<PodDefragPlan> plans;
};

// The plans for the `waiting` pods (those that are not waiting GPU pods are left out), with the
// GPU pods `bound` to the snapshot's nodes (others are ignored) and the `budgets`.
DefragReport PlanDefragmentation(const Policy& policy, const ClusterSnapshot& snapshot,
                                 std::span<const PodInfo> waiting, std::span<const PodInfo> bound,
                                 std::span<const DisruptionBudget> budgets,
                                 const DefragOptions& options = {});

}  // namespace gpusched
