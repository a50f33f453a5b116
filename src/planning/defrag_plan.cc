#include "gpusched/planning/defrag_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/planning/defrag_candidates.h"
#include "gpusched/planning/defrag_domain.h"
#include "gpusched/planning/defrag_search.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/plugins/gang_topology.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

std::string NameOf(const PodInfo& pod) { return pod.namespace_name + "/" + pod.name; }

bool IsWaiting(const PodInfo& pod, const Policy& policy) {
  if (!pod.node_name.empty() || pod.terminal()) return false;
  return AsksForGpu(pod, policy.gpu_names());
}

// The order waiting pods are planned in: priority, highest first, then oldest, then by name.
bool PlansFirst(const PodInfo* a, const PodInfo* b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  if (a->created_unix != b->created_unix) return a->created_unix < b->created_unix;
  return std::pair(a->namespace_name, a->name) < std::pair(b->namespace_name, b->name);
}

// "name (3), other (1)", most frequent first, each name quoted and cut (a node's reason may quote
// what the inventory holds).
std::string CountsText(const std::map<std::string, size_t>& counts) {
  std::vector<std::pair<std::string, size_t>> order(counts.begin(), counts.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [text, n] : order) {
    if (!out.empty()) out += ", ";
    out += QuoteForMessage(text, 96) + " (" + std::to_string(n) + ")";
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
  // A pod group whose domain plan, or lack of one, its first waiting member found.
  struct GroupDone {
    PodDefragPlan plan;      // that member's
    size_t next_member = 1;  // the member node of plan.group the next waiting member takes
  };

  // A later waiting member of a group in groups_done_: covered by its plan, or no plan as for it.
  void Follow(GroupDone& done, PodDefragPlan& out) const;
  // The domain plan `found` for `waiting`'s group `need`, in the report's words, carried out.
  void PlaceGroup(const DomainPlan& found, const GroupNeed& need, const PodInfo& waiting,
                  PodDefragPlan& out);
  // Describes `moves` (DefragCandidates indices, going to `destinations`) in the report's words,
  // then carries them out.
  void Move(std::span<const size_t> moves, std::span<const size_t> destinations,
            PodDefragPlan& out);

  const Policy& policy_;
  const ClusterSnapshot& snapshot_;
  DefragOptions options_;
  WorkingNodes nodes_;
  DefragCandidates pods_;
  std::map<std::string, GroupDone, std::less<>> groups_done_;  // by group key
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

// The one line that says why no domain could be freed for `need`'s group.
std::string GroupNoPlanWhy(const GroupNeed& need, const DomainSearchResult& found) {
  std::string why = "pod group " + QuoteForMessage(need.key) + " of " + std::to_string(need.size) +
                    " (" + std::to_string(need.to_place) +
                    " to place): no domain can be made room in within the rules";
  if (!found.closest.empty()) {
    why += "; closest " + found.closest + ", " +
           (found.closest_short > 0
                ? std::to_string(found.closest_short) +
                      (found.closest_short == 1 ? " member" : " members") + " short"
                : std::string("room made but a moved pod finds no node"));
  }
  if (!found.stays.empty()) why += "; pods that may not move: " + CountsText(found.stays);
  if (!found.dropped.empty()) why += "; domains: " + CountsText(found.dropped);
  if (found.cut) why += "; the search stopped at its bound";
  return why;
}

void DefragPlanner::Move(std::span<const size_t> moves, std::span<const size_t> destinations,
                         PodDefragPlan& out) {
  for (size_t k = 0; k < moves.size(); ++k) {
    const BoundPod& p = pods_.pod(moves[k]);
    out.moves.push_back(DefragMove{p.name, snapshot_.nodes()[p.node]->info.name,
                                   snapshot_.nodes()[destinations[k]]->info.name, p.gpu_milli});
    out.gpus_freed_milli += p.gpu_milli;
    const PodCharge charge = ChargeOf(*p.pod, policy_.Select(*p.pod).engine->gpu_names());
    UnchargePod(nodes_.Mutable(p.node), charge);
    ChargePod(nodes_.Mutable(destinations[k]), charge);
    pods_.Move(moves[k], destinations[k]);
  }
}

void DefragPlanner::PlaceGroup(const DomainPlan& found, const GroupNeed& need,
                               const PodInfo& waiting, PodDefragPlan& out) {
  out.outcome = DefragOutcome::kDomainPlan;
  Move(found.moves, found.destinations, out);
  DefragGroupPlan& group = out.group.emplace();
  group.key = need.key;
  group.size = need.size;
  group.to_place = need.to_place;
  group.level = GangTopologyLevels(*policy_.Select(waiting).engine)[found.level].name;
  group.domain = found.domain;
  const PodCharge charge = ChargeOf(waiting, policy_.Select(waiting).engine->gpu_names());
  for (size_t i : found.members) {
    ChargePod(nodes_.Mutable(i), charge);
    group.member_nodes.push_back(snapshot_.nodes()[i]->info.name);
  }
  if (!group.member_nodes.empty()) out.node = group.member_nodes.front();
}

void DefragPlanner::Follow(GroupDone& done, PodDefragPlan& out) const {
  out.group = done.plan.group;
  out.search_cut = done.plan.search_cut;
  if (done.plan.outcome != DefragOutcome::kDomainPlan) {
    out.outcome = DefragOutcome::kNoPlan;
    out.why = "as for " + done.plan.pod + ", of the same pod group";
    return;
  }
  out.outcome = DefragOutcome::kCovered;
  out.group->member_nodes.clear();
  out.group->covered_by = done.plan.pod;
  const std::vector<std::string>& members = done.plan.group->member_nodes;
  if (done.next_member < members.size()) out.node = members[done.next_member++];
}

PodDefragPlan DefragPlanner::Plan(const PodInfo& waiting) {
  PodDefragPlan out;
  out.pod = NameOf(waiting);
  out.priority = waiting.priority;
  const Policy::Selection selection = policy_.Select(waiting);
  out.profile = std::string(selection.profile);
  out.gpu_demand = GpuDemand(waiting, selection.engine->gpu_names());
  const std::string& key = waiting.group.key;
  if (auto done = groups_done_.find(key); waiting.group.grouped() && done != groups_done_.end()) {
    Follow(done->second, out);
    return out;
  }
  // A member of a group no domain has room for: a domain freed for the whole group, or none.
  std::optional<GroupNeed> need = GroupNeedOf(waiting, snapshot_);
  DomainSearchResult domain;
  if (need) {
    auto cycle = selection.OpenCycle(waiting, snapshot_);
    domain = DomainSearch({policy_, *selection.engine, *cycle, options_, nodes_, pods_})
                 .Run(waiting, *need);
    if (domain.best) {
      out.search_cut = domain.cut;
      PlaceGroup(*domain.best, *need, waiting, out);
      groups_done_[key] = GroupDone{out};
      return out;
    }
  }
  if (auto now = BestPlacement(selection, waiting, nodes_)) {
    out.outcome = DefragOutcome::kFitsNow;
    out.node = snapshot_.nodes()[*now]->info.name;
    ChargePod(nodes_.Mutable(*now), ChargeOf(waiting, selection.engine->gpu_names()));
    return out;
  }
  if (domain.applies) {
    out.outcome = DefragOutcome::kNoPlan;
    out.search_cut = domain.cut;
    out.group = DefragGroupPlan{need->key, need->size, need->to_place, "", "", {}, ""};
    out.why = GroupNoPlanWhy(*need, domain);
    groups_done_[key] = GroupDone{out};
    return out;
  }
  auto cycle = selection.OpenCycle(waiting, snapshot_);
  DefragSearchResult found =
      DefragSearch({policy_, *selection.engine, *cycle, options_, nodes_, pods_})
          .Run(waiting, out.gpu_demand);
  out.search_cut = found.cut;
  if (!found.best) {
    out.outcome = DefragOutcome::kNoPlan;
    out.why = NoPlanWhy(found);
    return out;
  }
  out.outcome = DefragOutcome::kPlan;
  out.node = snapshot_.nodes()[found.best->node]->info.name;
  Move(found.best->moves, found.best->destinations, out);
  ChargePod(nodes_.Mutable(found.best->node), ChargeOf(waiting, selection.engine->gpu_names()));
  return out;
}

}  // namespace

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
