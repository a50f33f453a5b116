// DefragSearch: the candidate search of a defragmentation plan (gpusched/planning/defrag_plan.h)
// for one waiting pod that fits nowhere now: the target nodes (those that turn it away for pods in
// use only) with the pods that may move off them, fewest first, then on each the subsets of those
// pods, within the search bounds, whose moves make room and whose pods all find a destination.
// It changes nothing: the working nodes it tries destinations on are left as they were. Not
// synchronized; everything given must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpusched/engine/cycle.h"
#include "gpusched/engine/engine.h"
#include "gpusched/planning/defrag_candidates.h"
#include "gpusched/planning/defrag_options.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// What a search for one waiting pod borrows (DefragSearch here, DomainSearch for a group's
// member): the policy, the engine and cycle that judge the waiting pod (Policy::Select,
// Selection::OpenCycle), the search bounds, the working nodes and the pods that may move.
struct DefragSearchScope {
  const Policy& policy;
  const Engine& engine;
  const Cycle& cycle;
  const DefragOptions& options;
  WorkingNodes& nodes;
  DefragCandidates& pods;
};

// One node's way to take the waiting pod: the pods (DefragCandidates indices) to move, and where
// each goes (node indices, in the same order).
struct NodePlan {
  size_t node = 0;
  std::vector<size_t> moves;
  std::vector<size_t> destinations;
  int64_t gpu_milli = 0;
};

// What the search found for one waiting pod, and why the nodes and pods it met did not serve.
struct DefragSearchResult {
  std::optional<NodePlan> best;  // fewest moves, then fewest GPUs moved, then the node's name
  size_t helpable = 0;           // nodes that turn it away for pods in use only
  bool cut = false;              // a bound stopped the search: `best` may not be minimal
  std::map<std::string, size_t> unresolvable;  // the reasons of the other nodes, as given
  std::map<std::string, size_t> stays;         // why pods may not move, per pod and node
  std::map<std::string, size_t> dropped;       // why target nodes gave no plan
};

class DefragSearch {
 public:
  explicit DefragSearch(const DefragSearchScope& scope) : scope_(scope) {}

  DefragSearchResult Run(const PodInfo& waiting, const ResourceList& demand);

 private:
  // The best plan on `target`, never worse than `best`, within the search bounds.
  std::optional<NodePlan> SearchNode(size_t target, std::vector<size_t> movable,
                                     const ResourceList& demand,
                                     const std::optional<NodePlan>& best);
  // The plans of `size` pods of `movable` that make room on `target`, fewest GPUs moved first
  // (then `movable`'s order); those found before the check bound, when it stops the search.
  std::vector<NodePlan> FittingSubsets(size_t target, std::span<const size_t> movable, size_t size);
  // Whether the waiting pod passes the filter on `target` with the pods `moved` gone; counts a
  // check, and false with `cut` set once the checks are spent.
  bool CheckFitsWithout(size_t target, std::span<const size_t> moved);

  DefragSearchScope scope_;
  size_t checks_ = 0;
  size_t trials_ = 0;
  DefragSearchResult result_;
};

// Where each of `moved` (DefragCandidates indices) would go once off the node it is on (node
// indices, in the same order): where BestPlacement puts it among the nodes not in `excluded` (node
// indices, ascending), with the moves before it counted; nullopt when one finds no node. Leaves
// `nodes` as they were.
std::optional<std::vector<size_t>> MovedPodDestinations(const Policy& policy, WorkingNodes& nodes,
                                                        const DefragCandidates& pods,
                                                        std::span<const size_t> moved,
                                                        std::span<const size_t> excluded);

}  // namespace gpusched
