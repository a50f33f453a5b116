#include "gpusched/planning/defrag_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/planning/defrag_candidates.h"
#include "gpusched/planning/defrag_search.h"
#include "gpusched/planning/working_nodes.h"

namespace gpusched {
namespace {

std::string NameOf(const PodInfo& pod) { return pod.namespace_name + "/" + pod.name; }

bool IsWaiting(const PodInfo& pod, const Policy& policy) {
  if (!pod.node_name.empty() || pod.terminal()) return false;
  return !GpuDemand(pod, policy.Select(pod).engine->gpu_names()).empty();
}

// The order waiting pods are planned in: priority, highest first, then oldest, then by name.
bool PlansFirst(const PodInfo* a, const PodInfo* b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  if (a->created_unix != b->created_unix) return a->created_unix < b->created_unix;
  return std::pair(a->namespace_name, a->name) < std::pair(b->namespace_name, b->name);
}

// "name (3), other (1)", most frequent first.
std::string CountsText(const std::map<std::string, size_t>& counts) {
  std::vector<std::pair<std::string, size_t>> order(counts.begin(), counts.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [text, n] : order) {
    if (!out.empty()) out += ", ";
    out += text + " (" + std::to_string(n) + ")";
  }
  return out;
}

// The plans of gpusched/planning/defrag_plan.h, pod after pod, on working nodes that carry out
// each plan before the next: the candidate search (DefragSearch) finds a node's plan, and the
// planner turns it into the report's words and applies it.
class DefragPlanner {
 public:
  DefragPlanner(const Policy& policy, const ClusterSnapshot& snapshot,
                std::span<const PodInfo> bound, std::span<const DisruptionBudget> budgets,
                const DefragOptions& options)
      : policy_(policy),
        snapshot_(snapshot),
        options_(options),
        nodes_(snapshot),
        pods_(policy, snapshot, bound, budgets) {}

  PodDefragPlan Plan(const PodInfo& waiting);

 private:
  // The moves of `plan` in the report's words.
  void Describe(const NodePlan& plan, PodDefragPlan& out) const;
  // Carries out `plan`: its pods moved, `waiting` placed on its node.
  void Apply(const NodePlan& plan, const PodInfo& waiting);

  const Policy& policy_;
  const ClusterSnapshot& snapshot_;
  DefragOptions options_;
  WorkingNodes nodes_;
  DefragCandidates pods_;
};

// The one line that says why no plan was found.
std::string NoPlanWhy(const DefragSearchResult& found) {
  if (found.helpable == 0) {
    return "no node would take it even with every pod gone (" + CountsText(found.unresolvable) +
           ")";
  }
  std::string why = std::to_string(found.helpable) + (found.helpable == 1 ? " node" : " nodes") +
                    " would take it with pods gone, but none within the rules";
  if (!found.stays.empty()) why += "; pods that may not move: " + CountsText(found.stays);
  if (!found.dropped.empty()) why += "; nodes: " + CountsText(found.dropped);
  if (found.cut) why += "; the search stopped at its bound";
  return why;
}

void DefragPlanner::Describe(const NodePlan& plan, PodDefragPlan& out) const {
  out.node = snapshot_.nodes()[plan.node]->info.name;
  for (size_t k = 0; k < plan.moves.size(); ++k) {
    const BoundPod& p = pods_.pod(plan.moves[k]);
    out.moves.push_back(DefragMove{
        p.name, out.node, snapshot_.nodes()[plan.destinations[k]]->info.name, p.gpu_milli});
    out.gpus_freed_milli += p.gpu_milli;
  }
}

void DefragPlanner::Apply(const NodePlan& plan, const PodInfo& waiting) {
  NodeState& freed = nodes_.Mutable(plan.node);
  for (size_t b : plan.moves) ReleasePod(freed, *pods_.pod(b).pod);
  for (size_t k = 0; k < plan.moves.size(); ++k) {
    ChargePod(nodes_.Mutable(plan.destinations[k]), *pods_.pod(plan.moves[k]).pod);
    pods_.Move(plan.moves[k], plan.destinations[k]);
  }
  ChargePod(nodes_.Mutable(plan.node), waiting);
}

PodDefragPlan DefragPlanner::Plan(const PodInfo& waiting) {
  PodDefragPlan out;
  out.pod = NameOf(waiting);
  out.priority = waiting.priority;
  const Policy::Selection selection = policy_.Select(waiting);
  out.profile = std::string(selection.profile);
  out.gpu_demand = GpuDemand(waiting, selection.engine->gpu_names());
  if (auto now = BestPlacement(selection, waiting, nodes_)) {
    out.outcome = DefragOutcome::kFitsNow;
    out.node = snapshot_.nodes()[*now]->info.name;
    ChargePod(nodes_.Mutable(*now), waiting);
    return out;
  }
  auto cycle = selection.OpenCycle(waiting, snapshot_);
  DefragSearchResult found = DefragSearch(policy_, selection, *cycle, options_, nodes_, pods_)
                                 .Run(waiting, out.gpu_demand);
  out.search_cut = found.cut;
  if (!found.best) {
    out.outcome = DefragOutcome::kNoPlan;
    out.why = NoPlanWhy(found);
    return out;
  }
  out.outcome = DefragOutcome::kPlan;
  Describe(*found.best, out);
  Apply(*found.best, waiting);
  return out;
}

}  // namespace

int64_t PodGpuMilli(const PodInfo& pod) {
  int64_t milli = 0;
  for (const auto& r : pod.requests) {
    const int64_t units = std::clamp<int64_t>(r.milli / 1000, 0, kMaxGpusPerNode);
    if (r.name == kGpuResource) milli += units * 1000;
    if (IsMigSliceResource(r.name)) milli += GpuEquivalentMilli(r.name, units);
  }
  return milli;
}

DefragReport PlanDefragmentation(const Policy& policy, const ClusterSnapshot& snapshot,
                                 std::span<const PodInfo> waiting, std::span<const PodInfo> bound,
                                 std::span<const DisruptionBudget> budgets,
                                 const DefragOptions& options) {
  DefragReport report;
  report.policy_source = policy.spec().source;
  report.budgets = budgets.size();
  std::vector<const PodInfo*> order;
  for (const PodInfo& pod : waiting) {
    if (IsWaiting(pod, policy)) order.push_back(&pod);
  }
  report.waiting = order.size();
  std::stable_sort(order.begin(), order.end(), PlansFirst);
  if (order.size() > options.max_waiting) order.resize(options.max_waiting);
  DefragPlanner planner(policy, snapshot, bound, budgets, options);
  for (const PodInfo* pod : order) report.plans.push_back(planner.Plan(*pod));
  return report;
}

}  // namespace gpusched
