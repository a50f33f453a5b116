#include "gpusched/planning/defrag_search.h"

#include <algorithm>
#include <utility>

#include "gpusched/model/pod_charge.h"

namespace gpusched {
namespace {

// Whether `a` is a better plan than `b`: fewer moves, then fewer GPUs moved, then the node's name.
bool Better(const NodePlan& a, const NodePlan& b, const ClusterSnapshot& snapshot) {
  if (a.moves.size() != b.moves.size()) return a.moves.size() < b.moves.size();
  if (a.gpu_milli != b.gpu_milli) return a.gpu_milli < b.gpu_milli;
  return snapshot.nodes()[a.node]->info.name < snapshot.nodes()[b.node]->info.name;
}

}  // namespace

DefragSearchResult DefragSearch::Run(const PodInfo& waiting, const ResourceList& demand) {
  std::vector<Verdict> verdicts = scope_.engine.Filter(scope_.cycle, scope_.nodes.candidates());
  // Targets with their movable pods, fewest first: they promise the fewest moves, and a small plan
  // found early caps the search on the others.
  std::vector<std::pair<size_t, std::vector<size_t>>> targets;
  for (size_t t = 0; t < verdicts.size(); ++t) {
    if (verdicts[t].code == VerdictCode::kUnresolvable) {
      ++result_.unresolvable[std::string(verdicts[t].reason)];
      continue;
    }
    ++result_.helpable;
    std::vector<size_t> movable = scope_.pods.MovableOff(t, waiting, result_.stays);
    if (movable.empty()) {
      ++result_.dropped["no pod there may move"];
      continue;
    }
    targets.emplace_back(t, std::move(movable));
  }
  std::stable_sort(targets.begin(), targets.end(),
                   [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  for (auto& [t, movable] : targets) {
    std::optional<NodePlan> plan = SearchNode(t, std::move(movable), demand, result_.best);
    if (plan && (!result_.best || Better(*plan, *result_.best, scope_.nodes.snapshot()))) {
      result_.best = std::move(plan);
    }
    if (result_.cut) break;
  }
  return std::move(result_);
}

bool DefragSearch::CheckFitsWithout(size_t target, std::span<const size_t> moved) {
  if (checks_ >= scope_.options.max_subset_checks) {
    result_.cut = true;
    return false;
  }
  ++checks_;
  NodeState node = scope_.nodes.node(target);
  for (size_t b : moved)
    UnchargePod(node, ChargeOf(*scope_.pods.pod(b).pod, scope_.engine.gpu_names()));
  const NodeState* one[] = {&node};
  return scope_.engine.Filter(scope_.cycle, std::span<const NodeState* const>(one))[0].passed();
}

std::vector<NodePlan> DefragSearch::FittingSubsets(size_t target, std::span<const size_t> movable,
                                                   size_t size) {
  const size_t m = movable.size();
  std::vector<NodePlan> fitting;
  // Every subset of `size`, as ascending positions into `movable`, in lexicographic order.
  std::vector<size_t> at(size);
  for (size_t i = 0; i < size; ++i) at[i] = i;
  std::vector<size_t> subset(size);
  while (true) {
    int64_t gpus = 0;
    for (size_t i = 0; i < size; ++i) {
      subset[i] = movable[at[i]];
      gpus += scope_.pods.pod(subset[i]).gpu_milli;
    }
    const bool fits = CheckFitsWithout(target, subset);
    if (result_.cut) break;
    if (fits) fitting.push_back(NodePlan{target, subset, {}, gpus});
    // The next subset: advance the last position that can still move right.
    size_t i = size;
    while (i > 0 && at[i - 1] == m - size + (i - 1)) --i;
    if (i == 0) break;
    ++at[i - 1];
    for (size_t j = i; j < size; ++j) at[j] = at[j - 1] + 1;
  }
  // Subsets come in the order of `movable`, so equal GPUs keep the most-GPUs-first, by-name order.
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const NodePlan& a, const NodePlan& b) { return a.gpu_milli < b.gpu_milli; });
  return fitting;
}

std::optional<NodePlan> DefragSearch::SearchNode(size_t target, std::vector<size_t> movable,
                                                 const ResourceList& demand,
                                                 const std::optional<NodePlan>& best) {
  const size_t max_size = best ? best->moves.size() : scope_.options.max_moves;
  scope_.pods.Rank(movable, demand, scope_.options.max_candidates_per_node);
  if (!CheckFitsWithout(target, movable)) {
    if (!result_.cut) ++result_.dropped["short even with every pod that may move gone"];
    return std::nullopt;
  }
  bool budgets_refused = false;
  bool no_destination = false;
  bool any_fits = false;
  for (size_t size = 1; size <= std::min(movable.size(), max_size) && !result_.cut; ++size) {
    // When the `size` pods that free the most do not make room, no `size` of them do.
    if (!CheckFitsWithout(target, std::span(movable).first(size))) continue;
    std::vector<NodePlan> fitting = FittingSubsets(target, movable, size);
    any_fits = any_fits || !fitting.empty();
    for (NodePlan& plan : fitting) {
      // Only a plan that beats the best so far is worth its destinations.
      if (best && !Better(plan, *best, scope_.nodes.snapshot())) break;
      if (!scope_.pods.BudgetsAllow(plan.moves)) {
        budgets_refused = true;
        continue;
      }
      if (trials_ >= scope_.options.max_destination_trials) {
        result_.cut = true;
        break;
      }
      ++trials_;
      if (auto to = MovedPodDestinations(scope_.policy, scope_.nodes, scope_.pods, plan.moves,
                                         std::span<const size_t>(&target, 1))) {
        plan.destinations = std::move(*to);
        return std::move(plan);
      }
      no_destination = true;
    }
  }
  if (!any_fits && !result_.cut && max_size == scope_.options.max_moves) {
    ++result_.dropped["needs more than " + std::to_string(max_size) + " moves"];
  }
  if (budgets_refused) ++result_.dropped["the disruption budgets refuse every set that would do"];
  if (no_destination) ++result_.dropped["no other node takes a pod that would move"];
  return std::nullopt;
}

std::optional<std::vector<size_t>> MovedPodDestinations(const Policy& policy, WorkingNodes& nodes,
                                                        const DefragCandidates& pods,
                                                        std::span<const size_t> moved,
                                                        std::span<const size_t> excluded) {
  std::vector<std::pair<size_t, NodeState>> undo;
  auto change = [&](size_t i) -> NodeState& {
    undo.emplace_back(i, nodes.node(i));
    return nodes.Mutable(i);
  };
  auto charge_of = [&](const PodInfo& pod) {
    return ChargeOf(pod, policy.Select(pod).engine->gpu_names());
  };
  for (size_t b : moved) UnchargePod(change(pods.pod(b).node), charge_of(*pods.pod(b).pod));
  std::vector<size_t> out;
  for (size_t b : moved) {
    const PodInfo& pod = *pods.pod(b).pod;
    std::optional<size_t> to = BestPlacement(policy.Select(pod), pod, nodes, excluded);
    if (!to) break;
    ChargePod(change(*to), charge_of(pod));
    out.push_back(*to);
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) nodes.Mutable(it->first) = it->second;
  if (out.size() != moved.size()) return std::nullopt;
  return out;
}

}  // namespace gpusched
