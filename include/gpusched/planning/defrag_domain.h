// DomainSearch: the domain plan of a defragmentation plan (gpusched/planning/defrag_plan.h). For a
// waiting member of a pod group of known size whose missing members no topology domain has room
// for, the domain where the fewest movable pods must move, each to a node outside it, so that the
// group's missing members all fit inside it.
//
// Room is what gang-topology counts (cluster/pod_groups.h, RoomFor): how many pods asking what
// the waiting pod asks each node takes, on the nodes the engine does not turn the pod away from as
// unresolvable (no move helps there). The levels are those of the engine's gang-topology plugin,
// innermost first (DefaultTopologyLevels() for an engine without it). A domain qualifies when it
// holds every placed member of the group. The search applies when some domain qualifies, none has
// room for the missing members already, and some node could take the pod with pods gone.
//
// Per domain, greedily: each node's movable pods (DefragCandidates' rules, judged with the node as
// the target; at most max_candidates_per_node, those freeing most of what the pod asks first) are
// taken off in that order, and a node's next step is the shortest run of them that adds room for
// a member. The step taken next is the one with the fewest moves per member of room it adds
// (counting no more members than are still short), then the most room, then node order; a step
// the disruption budgets refuse with the moves before it retires its node. A domain needing more
// than max_domain_moves moves gives no plan. Then, level by level, innermost first, the domains
// that made room are tried in order of fewest moves, then fewest GPUs moved, then name: the first
// whose moved pods all find a destination outside the domain (BestPlacement with the moves before
// counted; at most max_destination_trials such searches) is the plan, and outer levels are not
// tried. Bounded work: at most max_domains domains judged per search; each judged node costs one
// copy and one RoomFor per candidate pod. A search cut short by a bound says so (`cut`).
//
// It changes nothing: the working nodes and candidates are left as they were. Not synchronized;
// everything given must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/engine/cycle.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/topology.h"
#include "gpusched/planning/defrag_candidates.h"
#include "gpusched/planning/defrag_options.h"
#include "gpusched/planning/defrag_search.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// What a waiting pod's group still needs placed.
struct GroupNeed {
  std::string key;
  int32_t size = 0;
  int32_t to_place = 0;        // size less the members bound or assumed
  std::vector<size_t> placed;  // the nodes of its placed members (snapshot indices)
};

// The need of `waiting`'s group as the snapshot's groups know it (the pod's own size first, then
// the group's, then a size another object states); nullopt when the pod is in no group of known
// size, or every member is placed.
std::optional<GroupNeed> GroupNeedOf(const PodInfo& waiting, const ClusterSnapshot& snapshot);

// A domain made room in: the pods (DefragCandidates indices) to move and where each goes.
struct DomainPlan {
  size_t level = 0;           // index into the levels
  std::string domain;         // its name: the value of the label that makes it
  std::vector<size_t> nodes;  // its nodes, ascending
  std::vector<size_t> moves;
  std::vector<size_t> destinations;
  int64_t gpu_milli = 0;
  std::vector<size_t> members;  // the node of each member to place once the moves are done
};

struct DomainSearchResult {
  bool applies = false;  // the search ran (above); otherwise the pod is planned on one node
  std::optional<DomainPlan> best;
  bool cut = false;  // a bound stopped the search: `best` may not be the fewest moves
  // Without a plan: the qualifying domain left with the smallest shortfall ("rack 'r1'") and the
  // members it still lacks room for (0: it made room, but its moves were not carried through).
  std::string closest;
  int64_t closest_short = 0;
  std::map<std::string, size_t> stays;    // why pods may not move, per pod and node
  std::map<std::string, size_t> dropped;  // why domains gave no plan
};

class DomainSearch {
 public:
  explicit DomainSearch(const DefragSearchScope& scope);

  DomainSearchResult Run(const PodInfo& waiting, const GroupNeed& need);

 private:
  struct Domain;
  struct Freed;

  // Per level, the domains that hold every placed member, with their room now, closest to the
  // missing members first; empty when none qualifies or one already has room for them.
  std::vector<std::vector<Domain>> Qualifying(const PodInfo& waiting, const GroupNeed& need) const;
  // The greedy moves that make room for `need` more members in `domain`; the pods that may not
  // move are counted when `count_stays`.
  Freed Free(const Domain& domain, const PodInfo& waiting, int64_t need, bool count_stays);
  // The best of `made` whose pods all find a destination outside its domain.
  std::optional<DomainPlan> FirstCarriedThrough(std::vector<DomainPlan>& made);
  // Where each of the `count` members goes in `plan`'s domain once its moves are done: the nodes
  // with most room first, then node order.
  std::vector<size_t> MemberNodes(const DomainPlan& plan, const PodInfo& waiting,
                                  int64_t count) const;
  // Keeps the domain `name` of `level` as the closest when it is left shorter than the closest.
  void NoteShort(size_t level, const std::string& name, int64_t short_by);

  DefragSearchScope scope_;
  const std::vector<TopologyLevel>& levels_;
  ResourceList demand_;         // the GPU resources the waiting pod asks for
  std::vector<bool> eligible_;  // per node: the engine does not refuse the pod as unresolvable
  size_t trials_ = 0;
  std::optional<int64_t> closest_;
  DomainSearchResult result_;
};

}  // namespace gpusched
