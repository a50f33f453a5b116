#include "gpusched/planning/defrag_domain.h"

#include <algorithm>
#include <utility>

#include "gpusched/cluster/pod_groups.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/planning/defrag_search.h"
#include "gpusched/plugins/gang_topology.h"
#include "gpusched/util/quote.h"

namespace gpusched {

struct DomainSearch::Domain {
  size_t level = 0;
  uint32_t id = TopologyIndex::kNoDomain;  // in the snapshot's TopologyIndex at `level`
  std::string name;                        // the label value
  std::vector<size_t> nodes;
  int64_t room = 0;  // members it has room for now
};

struct DomainSearch::Freed {
  std::vector<size_t> moves;
  int64_t gpu_milli = 0;
  int64_t short_by = 0;  // members it still lacks room for; 0: room made
  std::string why;       // short_by > 0: why it stopped
};

namespace {

// One node's movable pods in the order they come off, and its room for a member after each.
struct NodeSteps {
  std::vector<size_t> pods;
  std::vector<int64_t> room_after;  // [k]: with the first k pods gone; [0]: now
  size_t taken = 0;
  bool retired = false;  // the budgets refused its next step

  // The end of the shortest run of pods past those taken that adds room; 0 when none does.
  size_t NextStep() const {
    for (size_t k = taken + 1; k < room_after.size(); ++k) {
      if (room_after[k] > room_after[taken]) return k;
    }
    return 0;
  }
};

struct Step {
  size_t cost = 0;   // moves
  int64_t gain = 0;  // members of room, no more than are short
};

// Whether `a` is the better step: fewer moves per member of room, then more room.
bool BetterStep(const Step& a, const Step& b) {
  const int64_t lhs = static_cast<int64_t>(a.cost) * b.gain;
  const int64_t rhs = static_cast<int64_t>(b.cost) * a.gain;
  if (lhs != rhs) return lhs < rhs;
  return a.gain > b.gain;
}

// Fewest moves, then fewest GPUs moved, then the domain's name.
bool BetterPlan(const DomainPlan& a, const DomainPlan& b) {
  if (a.moves.size() != b.moves.size()) return a.moves.size() < b.moves.size();
  if (a.gpu_milli != b.gpu_milli) return a.gpu_milli < b.gpu_milli;
  return a.domain < b.domain;
}

}  // namespace

std::optional<GroupNeed> GroupNeedOf(const PodInfo& waiting, const ClusterSnapshot& snapshot) {
  if (!waiting.group.grouped()) return std::nullopt;
  const PodGroups& groups = snapshot.groups();
  const PodGroupState* group = groups.Find(waiting.group.key);
  GroupNeed need{waiting.group.key, waiting.group.size, 0, {}};
  if (need.size <= 0) {
    need.size = group != nullptr ? group->size : groups.StatedSize(waiting.group.key);
  }
  if (need.size <= 0) return std::nullopt;
  int32_t placed = 0;
  if (group != nullptr) {
    const std::string self = PodKey(waiting);
    for (const GroupMember& m : group->members) {
      if (m.node.empty() || m.pod_key == self) continue;
      ++placed;
      if (uint32_t p = snapshot.IndexOf(m.node); p != NodeIndex::kAbsent) need.placed.push_back(p);
    }
  }
  need.to_place = need.size - placed;
  if (need.to_place <= 0) return std::nullopt;
  return need;
}

DomainSearch::DomainSearch(const DefragSearchScope& scope)
    : scope_(scope), levels_(GangTopologyLevels(scope.engine)) {}

DomainSearchResult DomainSearch::Run(const PodInfo& waiting, const GroupNeed& need) {
  const std::vector<Verdict> verdicts =
      scope_.engine.Filter(scope_.cycle, scope_.nodes.candidates());
  eligible_.resize(verdicts.size());
  for (size_t i = 0; i < verdicts.size(); ++i) {
    eligible_[i] = verdicts[i].code != VerdictCode::kUnresolvable;
  }
  if (std::none_of(eligible_.begin(), eligible_.end(), [](bool e) { return e; })) {
    return std::move(result_);
  }
  demand_ = GpuDemand(waiting, scope_.engine.gpu_names());
  std::vector<std::vector<Domain>> levels = Qualifying(waiting, need);
  result_.applies = !levels.empty();
  size_t judged = 0;
  bool first = true;  // pods that stay are counted on the first level judged: once per pod
  for (const std::vector<Domain>& domains : levels) {
    if (domains.empty()) continue;
    std::vector<DomainPlan> made;
    for (const Domain& d : domains) {
      if (judged == scope_.options.max_domains) {
        result_.cut = true;
        break;
      }
      ++judged;
      Freed freed = Free(d, waiting, need.to_place - d.room, first);
      if (freed.short_by > 0) {
        ++result_.dropped[freed.why];
        NoteShort(d.level, d.name, freed.short_by);
        continue;
      }
      made.push_back(
          DomainPlan{d.level, d.name, d.nodes, std::move(freed.moves), {}, freed.gpu_milli, {}});
    }
    first = false;
    result_.best = FirstCarriedThrough(made);
    if (result_.best) {
      result_.best->members = MemberNodes(*result_.best, waiting, need.to_place);
      break;
    }
    if (result_.cut) break;
  }
  return std::move(result_);
}

std::vector<std::vector<DomainSearch::Domain>> DomainSearch::Qualifying(
    const PodInfo& waiting, const GroupNeed& need) const {
  const std::shared_ptr<const TopologyIndex> index = scope_.nodes.snapshot().TopologyFor(levels_);
  std::vector<std::vector<Domain>> out(levels_.size());
  bool any = false;
  for (size_t l = 0; l < levels_.size(); ++l) {
    for (uint32_t id = 0; id < index->count(l); ++id) {
      const bool holds_placed = std::all_of(need.placed.begin(), need.placed.end(),
                                            [&](size_t p) { return index->Of(l, p) == id; });
      if (!holds_placed) continue;
      Domain d{l, id, std::string(index->name(l, id)), {}, 0};
      for (uint32_t i : index->Members(l, id)) {
        d.nodes.push_back(i);
        if (eligible_[i]) d.room += RoomFor(scope_.nodes.node(i), waiting.requests);
      }
      out[l].push_back(std::move(d));
    }
    for (const Domain& d : out[l]) {
      if (d.room >= need.to_place) return {};  // one holds them: no domain plan
    }
    // The domains closest to room first, so a bounded search judges them.
    std::stable_sort(out[l].begin(), out[l].end(),
                     [](const Domain& a, const Domain& b) { return a.room > b.room; });
    any = any || !out[l].empty();
  }
  if (!any) return {};
  return out;
}

DomainSearch::Freed DomainSearch::Free(const Domain& domain, const PodInfo& waiting, int64_t need,
                                       bool count_stays) {
  std::map<std::string, size_t> uncounted;
  std::vector<NodeSteps> steps;
  for (size_t i : domain.nodes) {
    if (!eligible_[i]) continue;
    NodeSteps s;
    s.pods = scope_.pods.MovableOff(i, waiting, count_stays ? result_.stays : uncounted);
    if (s.pods.empty()) continue;
    scope_.pods.Rank(s.pods, demand_, scope_.options.max_candidates_per_node);
    NodeState node = scope_.nodes.node(i);
    s.room_after.push_back(RoomFor(node, waiting.requests));
    for (size_t b : s.pods) {
      UnchargePod(node, ChargeOf(*scope_.pods.pod(b).pod, scope_.engine.gpu_names()));
      s.room_after.push_back(RoomFor(node, waiting.requests));
    }
    steps.push_back(std::move(s));
  }
  Freed out;
  out.short_by = need;
  bool budgets_refused = false;
  while (out.short_by > 0) {
    NodeSteps* pick = nullptr;
    size_t pick_end = 0;
    Step best;
    for (NodeSteps& s : steps) {
      const size_t end = s.retired ? 0 : s.NextStep();
      if (end == 0) continue;
      const Step step{end - s.taken,
                      std::min(out.short_by, s.room_after[end] - s.room_after[s.taken])};
      if (pick == nullptr || BetterStep(step, best)) {
        pick = &s;
        pick_end = end;
        best = step;
      }
    }
    if (pick == nullptr) break;
    if (out.moves.size() + best.cost > scope_.options.max_domain_moves) {
      out.why = "needs more than " + std::to_string(scope_.options.max_domain_moves) + " moves";
      return out;
    }
    std::vector<size_t> with = out.moves;
    with.insert(with.end(), pick->pods.begin() + static_cast<std::ptrdiff_t>(pick->taken),
                pick->pods.begin() + static_cast<std::ptrdiff_t>(pick_end));
    if (!scope_.pods.BudgetsAllow(with)) {
      pick->retired = true;
      budgets_refused = true;
      continue;
    }
    for (size_t k = pick->taken; k < pick_end; ++k)
      out.gpu_milli += scope_.pods.pod(pick->pods[k]).gpu_milli;
    out.moves = std::move(with);
    out.short_by -= pick->room_after[pick_end] - pick->room_after[pick->taken];
    pick->taken = pick_end;
  }
  if (out.short_by > 0) {
    out.why = budgets_refused ? "the disruption budgets refuse every set that would do"
                              : "short even with every pod that may move gone";
  }
  out.short_by = std::max<int64_t>(out.short_by, 0);
  return out;
}

std::optional<DomainPlan> DomainSearch::FirstCarriedThrough(std::vector<DomainPlan>& made) {
  std::sort(made.begin(), made.end(), BetterPlan);
  for (DomainPlan& plan : made) {
    if (trials_ == scope_.options.max_destination_trials) {
      result_.cut = true;
      break;
    }
    ++trials_;
    if (auto to = MovedPodDestinations(scope_.policy, scope_.nodes, scope_.pods, plan.moves,
                                       plan.nodes)) {
      plan.destinations = std::move(*to);
      return std::move(plan);
    }
    ++result_.dropped["no node outside it takes a pod that would move"];
    NoteShort(plan.level, plan.domain, 0);
  }
  return std::nullopt;
}

std::vector<size_t> DomainSearch::MemberNodes(const DomainPlan& plan, const PodInfo& waiting,
                                              int64_t count) const {
  std::vector<std::pair<int64_t, size_t>> rooms;  // room once the moves are done, node
  for (size_t i : plan.nodes) {
    if (!eligible_[i]) continue;
    NodeState node = scope_.nodes.node(i);
    for (size_t b : plan.moves) {
      if (scope_.pods.pod(b).node == i)
        UnchargePod(node, ChargeOf(*scope_.pods.pod(b).pod, scope_.engine.gpu_names()));
    }
    if (const int64_t room = RoomFor(node, waiting.requests); room > 0) rooms.emplace_back(room, i);
  }
  std::stable_sort(rooms.begin(), rooms.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> out;
  for (const auto& [room, i] : rooms) {
    for (int64_t k = 0; k < room && static_cast<int64_t>(out.size()) < count; ++k) {
      out.push_back(i);
    }
  }
  return out;
}

void DomainSearch::NoteShort(size_t level, const std::string& name, int64_t short_by) {
  if (closest_ && *closest_ <= short_by) return;
  closest_ = short_by;
  result_.closest =
      QuoteForMessage(levels_[level].name, 64) + " '" + QuoteForMessage(name, 96) + "'";
  result_.closest_short = short_by;
}

}  // namespace gpusched
