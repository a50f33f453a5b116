#include "gpusched/planning/defrag_plan.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

#include "gpusched/planning/capacity.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/codec/json_writer.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

// The controllers that recreate a deleted pod, wherever it then fits.
constexpr std::string_view kRecreatingKinds[] = {"ReplicaSet", "ReplicationController",
                                                 "StatefulSet"};

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

// A bound GPU pod as the plans move it.
struct BoundPod {
  const PodInfo* pod = nullptr;
  size_t node = 0;  // index into the snapshot's nodes, where the plans so far leave it
  int64_t gpu_milli = 0;
  std::string name;                            // namespace/name
  std::optional<std::vector<size_t>> budgets;  // indices of the budgets selecting it, once asked
};

// One node's way to take the waiting pod: the pods (indices into the bound pods) to move, and
// where each goes (node indices, in the same order).
struct NodePlan {
  size_t node = 0;
  std::vector<size_t> moves;
  std::vector<size_t> destinations;
  int64_t gpu_milli = 0;
};

// Whether `a` is a better plan than `b`: fewer moves, then fewer GPUs moved, then the node's name.
bool Better(const NodePlan& a, const NodePlan& b, const ClusterSnapshot& snapshot) {
  if (a.moves.size() != b.moves.size()) return a.moves.size() < b.moves.size();
  if (a.gpu_milli != b.gpu_milli) return a.gpu_milli < b.gpu_milli;
  return snapshot.nodes()[a.node]->info.name < snapshot.nodes()[b.node]->info.name;
}

class DefragPlanner {
 public:
  DefragPlanner(const Policy& policy, const ClusterSnapshot& snapshot,
                std::span<const PodInfo> bound, std::span<const DisruptionBudget> budgets,
                const DefragOptions& options)
      : policy_(policy),
        snapshot_(snapshot),
        budgets_(budgets),
        options_(options),
        nodes_(snapshot),
        on_node_(snapshot.size()) {
    for (const PodInfo& pod : bound) {
      uint32_t node = snapshot.IndexOf(pod.node_name);
      if (pod.node_name.empty() || pod.terminal() || node == NodeIndex::kAbsent) continue;
      if (GpuDemand(pod, policy.Select(pod).engine->gpu_names()).empty()) continue;
      on_node_[node].push_back(pods_.size());
      if (pod.controller.known()) {
        by_controller_[pod.namespace_name + "/" + pod.controller.uid].push_back(pods_.size());
      }
      pods_.push_back(BoundPod{&pod, node, PodGpuMilli(pod), NameOf(pod), std::nullopt});
    }
    for (size_t i = 0; i < budgets.size(); ++i) {
      budgets_by_namespace_[budgets[i].namespace_name].push_back(i);
      budget_left_.push_back(budgets[i].has_status ? budgets[i].disruptions_allowed : 0);
    }
  }

  PodDefragPlan Plan(const PodInfo& waiting);

 private:
  // Why bound pod `b` may not move off `target` for `waiting`; nullopt when it may.
  std::optional<std::string> WhyStays(size_t b, const PodInfo& waiting, size_t target);
  const std::vector<size_t>& BudgetsOf(size_t b);
  bool ReplicaElsewhere(size_t b, size_t target) const;
  // Whether `waiting` passes the filter on `target` with the pods `moved` gone.
  bool FitsWithout(const Cycle& cycle, const Engine& engine, size_t target,
                   std::span<const size_t> moved) const;
  // Whether the budgets of the pods `moved` allow all of them at once.
  bool BudgetsAllow(std::span<const size_t> moved);
  // Where each of `moved` would go once off `target` (node indices), or nullopt when one finds no
  // node. Leaves the working nodes as they were.
  std::optional<std::vector<size_t>> Destinations(size_t target, std::span<const size_t> moved);
  // The best plan on `target`, never worse than `best`, within the search bounds.
  std::optional<NodePlan> SearchNode(const Cycle& cycle, const Engine& engine, size_t target,
                                     std::vector<size_t> movable, const ResourceList& demand,
                                     const std::optional<NodePlan>& best);
  void Apply(const NodePlan& plan, const PodInfo& waiting);

  const Policy& policy_;
  const ClusterSnapshot& snapshot_;
  std::span<const DisruptionBudget> budgets_;
  DefragOptions options_;
  WorkingNodes nodes_;
  std::vector<BoundPod> pods_;
  std::vector<std::vector<size_t>> on_node_;                            // per node, its bound pods
  std::unordered_map<std::string, std::vector<size_t>> by_controller_;  // namespace/uid
  std::map<std::string, std::vector<size_t>, std::less<>> budgets_by_namespace_;
  std::vector<int64_t> budget_left_;
  // Per waiting pod: the search's counts and why nodes and pods did not serve.
  size_t checks_ = 0;
  size_t trials_ = 0;
  bool cut_ = false;
  std::map<std::string, size_t> stays_;    // why pods may not move, counted per pod and node
  std::map<std::string, size_t> dropped_;  // why target nodes gave no plan
};

const std::vector<size_t>& DefragPlanner::BudgetsOf(size_t b) {
  BoundPod& p = pods_[b];
  if (!p.budgets) {
    p.budgets.emplace();
    auto it = budgets_by_namespace_.find(p.pod->namespace_name);
    if (it != budgets_by_namespace_.end()) {
      for (size_t i : it->second) {
        if (budgets_[i].Selects(*p.pod)) p.budgets->push_back(i);
      }
    }
  }
  return *p.budgets;
}

bool DefragPlanner::ReplicaElsewhere(size_t b, size_t target) const {
  const PodInfo& pod = *pods_[b].pod;
  auto it = by_controller_.find(pod.namespace_name + "/" + pod.controller.uid);
  if (it == by_controller_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](size_t o) { return o != b && pods_[o].node != target; });
}

std::optional<std::string> DefragPlanner::WhyStays(size_t b, const PodInfo& waiting,
                                                   size_t target) {
  const PodInfo& pod = *pods_[b].pod;
  if (pod.priority > waiting.priority) return "of higher priority";
  if (!pod.controller.known()) return "no controller";
  const std::string_view kind = pod.controller.kind;
  if (std::find(std::begin(kRecreatingKinds), std::end(kRecreatingKinds), kind) ==
      std::end(kRecreatingKinds)) {
    return kind == "Job" || kind == "DaemonSet"
               ? "a " + std::string(kind) + "'s pod"
               : std::string("a controller not known to recreate its pods elsewhere");
  }
  if (!ReplicaElsewhere(b, target)) return "no replica on another node";
  const std::vector<size_t>& budgets = BudgetsOf(b);
  if (budgets.size() > 1) return "under several disruption budgets";
  if (budgets.size() == 1 && budget_left_[budgets[0]] <= 0) {
    return "its disruption budget allows no disruption";
  }
  return std::nullopt;
}

bool DefragPlanner::FitsWithout(const Cycle& cycle, const Engine& engine, size_t target,
                                std::span<const size_t> moved) const {
  NodeState node = nodes_.node(target);
  for (size_t b : moved) ReleasePod(node, *pods_[b].pod);
  const NodeState* one[] = {&node};
  return engine.Filter(cycle, std::span<const NodeState* const>(one))[0].passed();
}

bool DefragPlanner::BudgetsAllow(std::span<const size_t> moved) {
  std::map<size_t, int64_t> used;
  for (size_t b : moved) {
    for (size_t i : BudgetsOf(b)) {
      if (++used[i] > budget_left_[i]) return false;
    }
  }
  return true;
}

std::optional<std::vector<size_t>> DefragPlanner::Destinations(size_t target,
                                                               std::span<const size_t> moved) {
  std::vector<std::pair<size_t, NodeState>> undo;
  auto change = [&](size_t i) -> NodeState& {
    undo.emplace_back(i, nodes_.node(i));
    return nodes_.Mutable(i);
  };
  NodeState& freed = change(target);
  for (size_t b : moved) ReleasePod(freed, *pods_[b].pod);
  std::vector<size_t> out;
  for (size_t b : moved) {
    const PodInfo& pod = *pods_[b].pod;
    std::optional<size_t> to = BestPlacement(policy_.Select(pod), pod, nodes_, target);
    if (!to) break;
    ChargePod(change(*to), pod);
    out.push_back(*to);
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) nodes_.Mutable(it->first) = it->second;
  if (out.size() != moved.size()) return std::nullopt;
  return out;
}

std::optional<NodePlan> DefragPlanner::SearchNode(const Cycle& cycle, const Engine& engine,
                                                  size_t target, std::vector<size_t> movable,
                                                  const ResourceList& demand,
                                                  const std::optional<NodePlan>& best) {
  const size_t max_size = best ? best->moves.size() : options_.max_moves;
  // The pods that free the most of what the waiting pod asks for first, then the most GPUs, then
  // by name, so the search is deterministic.
  auto relevance = [&](size_t b) {
    int64_t milli = 0;
    for (const auto& d : demand) milli += pods_[b].pod->requests.milli(d.name);
    return milli;
  };
  std::vector<std::pair<int64_t, size_t>> keyed;
  for (size_t b : movable) keyed.emplace_back(relevance(b), b);
  std::sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    const BoundPod& a = pods_[x.second];
    const BoundPod& b = pods_[y.second];
    if (x.first != y.first) return x.first > y.first;
    if (a.gpu_milli != b.gpu_milli) return a.gpu_milli > b.gpu_milli;
    return a.name < b.name;
  });
  for (size_t i = 0; i < keyed.size(); ++i) movable[i] = keyed[i].second;
  if (movable.size() > options_.max_candidates_per_node) {
    movable.resize(options_.max_candidates_per_node);
  }
  if (checks_ >= options_.max_subset_checks) {
    cut_ = true;
    return std::nullopt;
  }
  ++checks_;
  if (!FitsWithout(cycle, engine, target, movable)) {
    ++dropped_["short even with every pod that may move gone"];
    return std::nullopt;
  }
  const size_t m = movable.size();
  bool budgets_refused = false;
  bool no_destination = false;
  bool any_fits = false;
  for (size_t size = 1; size <= std::min(m, max_size) && !cut_; ++size) {
    struct Fitting {
      std::vector<size_t> moves;
      int64_t gpu_milli = 0;
    };
    // When the `size` pods that free the most do not make room, no `size` of them do.
    if (checks_ >= options_.max_subset_checks) {
      cut_ = true;
      break;
    }
    ++checks_;
    if (!FitsWithout(cycle, engine, target, std::span(movable).first(size))) continue;
    // Every subset of `size`, as ascending positions into `movable`, in lexicographic order.
    std::vector<Fitting> fitting;
    std::vector<size_t> at(size);
    for (size_t i = 0; i < size; ++i) at[i] = i;
    std::vector<size_t> subset(size);
    while (true) {
      if (checks_ >= options_.max_subset_checks) {
        cut_ = true;
        break;
      }
      ++checks_;
      int64_t gpus = 0;
      for (size_t i = 0; i < size; ++i) {
        subset[i] = movable[at[i]];
        gpus += pods_[subset[i]].gpu_milli;
      }
      if (FitsWithout(cycle, engine, target, subset)) fitting.push_back({subset, gpus});
      // The next subset: advance the last position that can still move right.
      size_t i = size;
      while (i > 0 && at[i - 1] == m - size + (i - 1)) --i;
      if (i == 0) break;
      ++at[i - 1];
      for (size_t j = i; j < size; ++j) at[j] = at[j - 1] + 1;
    }
    // Subsets come in the order of `movable`, so equal GPUs keep the most-GPUs-first, by-name
    // order.
    any_fits = any_fits || !fitting.empty();
    std::stable_sort(fitting.begin(), fitting.end(),
                     [](const Fitting& a, const Fitting& b) { return a.gpu_milli < b.gpu_milli; });
    for (const Fitting& f : fitting) {
      // Only a plan that beats the best so far is worth its destinations.
      if (best && !Better(NodePlan{target, f.moves, {}, f.gpu_milli}, *best, snapshot_)) break;
      if (!BudgetsAllow(f.moves)) {
        budgets_refused = true;
        continue;
      }
      if (trials_ >= options_.max_destination_trials) {
        cut_ = true;
        break;
      }
      ++trials_;
      if (auto to = Destinations(target, f.moves)) {
        return NodePlan{target, f.moves, std::move(*to), f.gpu_milli};
      }
      no_destination = true;
    }
  }
  if (!any_fits && !cut_ && max_size == options_.max_moves) {
    ++dropped_["needs more than " + std::to_string(max_size) + " moves"];
  }
  if (budgets_refused) ++dropped_["the disruption budgets refuse every set that would do"];
  if (no_destination) ++dropped_["no other node takes a pod that would move"];
  return std::nullopt;
}

void DefragPlanner::Apply(const NodePlan& plan, const PodInfo& waiting) {
  NodeState& freed = nodes_.Mutable(plan.node);
  for (size_t b : plan.moves) ReleasePod(freed, *pods_[b].pod);
  for (size_t k = 0; k < plan.moves.size(); ++k) {
    const size_t b = plan.moves[k];
    const size_t to = plan.destinations[k];
    ChargePod(nodes_.Mutable(to), *pods_[b].pod);
    auto& from_list = on_node_[pods_[b].node];
    from_list.erase(std::find(from_list.begin(), from_list.end(), b));
    on_node_[to].push_back(b);
    pods_[b].node = to;
    for (size_t i : BudgetsOf(b)) --budget_left_[i];
  }
  ChargePod(nodes_.Mutable(plan.node), waiting);
}

PodDefragPlan DefragPlanner::Plan(const PodInfo& waiting) {
  PodDefragPlan out;
  out.pod = NameOf(waiting);
  out.priority = waiting.priority;
  const Policy::Selection selection = policy_.Select(waiting);
  const Engine& engine = *selection.engine;
  out.profile = std::string(selection.profile);
  out.gpu_demand = GpuDemand(waiting, engine.gpu_names());
  if (auto now = BestPlacement(selection, waiting, nodes_)) {
    out.outcome = DefragOutcome::kFitsNow;
    out.node = snapshot_.nodes()[*now]->info.name;
    ChargePod(nodes_.Mutable(*now), waiting);
    return out;
  }
  checks_ = trials_ = 0;
  cut_ = false;
  stays_.clear();
  dropped_.clear();
  auto cycle = selection.OpenCycle(waiting, snapshot_);
  std::vector<Verdict> verdicts = engine.Filter(*cycle, nodes_.candidates());
  std::map<std::string, size_t> unresolvable;
  // Targets with their movable pods, fewest first: they promise the fewest moves, and a small plan
  // found early caps the search on the others.
  std::vector<std::pair<size_t, std::vector<size_t>>> targets;
  size_t helpable = 0;  // nodes that turn it away for pods in use only
  for (size_t t = 0; t < verdicts.size(); ++t) {
    if (verdicts[t].code == VerdictCode::kUnresolvable) {
      ++unresolvable[QuoteForMessage(verdicts[t].reason, 96)];
      continue;
    }
    ++helpable;
    std::vector<size_t> movable;
    for (size_t b : on_node_[t]) {
      if (auto why = WhyStays(b, waiting, t)) {
        ++stays_[*why];
      } else {
        movable.push_back(b);
      }
    }
    if (movable.empty()) {
      ++dropped_["no pod there may move"];
      continue;
    }
    targets.emplace_back(t, std::move(movable));
  }
  std::stable_sort(targets.begin(), targets.end(),
                   [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::optional<NodePlan> best;
  for (auto& [t, movable] : targets) {
    std::optional<NodePlan> plan =
        SearchNode(*cycle, engine, t, std::move(movable), out.gpu_demand, best);
    if (plan && (!best || Better(*plan, *best, snapshot_))) best = std::move(plan);
    if (cut_) break;
  }
  out.search_cut = cut_;
  if (best) {
    out.outcome = DefragOutcome::kPlan;
    out.node = snapshot_.nodes()[best->node]->info.name;
    for (size_t k = 0; k < best->moves.size(); ++k) {
      const BoundPod& p = pods_[best->moves[k]];
      out.moves.push_back(DefragMove{
          p.name, out.node, snapshot_.nodes()[best->destinations[k]]->info.name, p.gpu_milli});
      out.gpus_freed_milli += p.gpu_milli;
    }
    Apply(*best, waiting);
    return out;
  }
  out.outcome = DefragOutcome::kNoPlan;
  if (helpable == 0) {
    out.why = "no node would take it even with every pod gone (" + CountsText(unresolvable) + ")";
  } else {
    out.why = std::to_string(helpable) + (helpable == 1 ? " node" : " nodes") +
              " would take it with pods gone, but none within the rules";
    if (!stays_.empty()) out.why += "; pods that may not move: " + CountsText(stays_);
    if (!dropped_.empty()) out.why += "; nodes: " + CountsText(dropped_);
    if (cut_) out.why += "; the search stopped at its bound";
  }
  return out;
}

std::string GpusText(int64_t milli) {
  std::string n = FormatGpus(static_cast<double>(milli) / 1000);
  return n + (n == "1" ? " GPU" : " GPUs");
}

std::string_view OutcomeName(DefragOutcome outcome) {
  switch (outcome) {
    case DefragOutcome::kFitsNow:
      return "fits-now";
    case DefragOutcome::kPlan:
      return "plan";
    case DefragOutcome::kNoPlan:
      return "no-plan";
  }
  return "no-plan";
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

std::string FormatDefragPlanText(const DefragReport& r) {
  std::string out = "defragmentation plan for " +
                    (r.inventory.empty() ? "the inventory" : r.inventory) + ", policy " +
                    r.policy_source + "; " + std::to_string(r.waiting) + " waiting GPU pod" +
                    (r.waiting == 1 ? "" : "s") + ", " + std::to_string(r.budgets) +
                    " disruption budget" + (r.budgets == 1 ? "" : "s");
  if (r.budgets_skipped > 0) out += " (" + std::to_string(r.budgets_skipped) + " unreadable)";
  out += "\nadvice only: gpusched moves nothing; each plan counts those above it as carried out\n";
  if (r.plans.size() < r.waiting) {
    out += "planned the first " + std::to_string(r.plans.size()) + " by priority and age\n";
  }
  for (const PodDefragPlan& p : r.plans) {
    out += "\n" + QuoteForMessage(p.pod) + " (" + FormatResourceList(p.gpu_demand) + ", priority " +
           std::to_string(p.priority) + ", profile " + QuoteForMessage(p.profile) + "): ";
    switch (p.outcome) {
      case DefragOutcome::kFitsNow:
        out += "fits now on " + QuoteForMessage(p.node) + "\n";
        break;
      case DefragOutcome::kPlan:
        out += std::to_string(p.moves.size()) + (p.moves.size() == 1 ? " move" : " moves") +
               " free " + GpusText(p.gpus_freed_milli) + " on " + QuoteForMessage(p.node) +
               (p.search_cut ? " (search stopped at its bound: maybe not the fewest)" : "") + "\n";
        for (const DefragMove& m : p.moves) {
          out += "  move " + QuoteForMessage(m.pod) + " (" + GpusText(m.gpu_milli) + ") from " +
                 QuoteForMessage(m.from) + " to " + QuoteForMessage(m.to) + "\n";
        }
        out += "  then it fits on " + QuoteForMessage(p.node) + "\n";
        break;
      case DefragOutcome::kNoPlan:
        out += "no plan: " + p.why + "\n";
        break;
    }
  }
  return out;
}

std::string FormatDefragPlanJson(const DefragReport& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(r.inventory).Key("policy").String(r.policy_source);
  w.Key("budgets").Int(static_cast<int64_t>(r.budgets));
  w.Key("budgetsSkipped").Int(static_cast<int64_t>(r.budgets_skipped));
  w.Key("waiting").Int(static_cast<int64_t>(r.waiting)).Key("plans").BeginArray();
  for (const PodDefragPlan& p : r.plans) {
    w.BeginObject().Key("pod").String(p.pod).Key("profile").String(p.profile);
    w.Key("priority").Int(p.priority).Key("requests").BeginObject();
    for (const auto& d : p.gpu_demand) w.Key(d.name).Int(d.milli / 1000);
    w.EndObject().Key("outcome").String(OutcomeName(p.outcome)).Key("node").String(p.node);
    w.Key("moves").BeginArray();
    for (const DefragMove& m : p.moves) {
      w.BeginObject().Key("pod").String(m.pod).Key("from").String(m.from).Key("to").String(m.to);
      w.Key("gpus").Double(static_cast<double>(m.gpu_milli) / 1000).EndObject();
    }
    w.EndArray().Key("gpusFreed").Double(static_cast<double>(p.gpus_freed_milli) / 1000);
    w.Key("searchCut").Bool(p.search_cut).Key("why").String(p.why).EndObject();
  }
  w.EndArray().EndObject();
  return out + "\n";
}

}  // namespace gpusched
