#include "gpusched/plugins/gang_topology.h"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <unordered_map>

#include "gpusched/cluster/pod_groups.h"
#include "gpusched/cluster/topology_index.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {
namespace {

constexpr std::array<std::string_view, 2> kModes = {"preferred", "required"};
constexpr std::array<std::string_view, 2> kLevelKeys = {"name", "keys"};
// Other groups' holds judged per cycle: the most recent ones.
constexpr size_t kMaxHolds = 16;
constexpr uint32_t kNoDomain = TopologyIndex::kNoDomain;

struct GangTopologyArgs {
  GangTopologySettings settings;

  void Read(SettingsSource& source) {
    if (source.Has("mode")) {
      if (auto m = source.OneOf("mode", kModes)) {
        settings.mode = *m == "required" ? TopologyMode::kRequired : TopologyMode::kPreferred;
      }
    }
    if (source.Has("holdSeconds")) {
      if (auto v = source.Number("holdSeconds", 0, 3600)) {
        settings.hold = std::chrono::seconds(static_cast<int64_t>(*v));
      }
    }
    if (source.Has("levels")) ReadLevels(source);
  }

  void ReadLevels(SettingsSource& source) {
    auto list = source.List("levels", kLevelKeys, kMaxTopologyLevels,
                            "must be a list of 1 to 8 levels, innermost first");
    if (!list) return;
    std::vector<TopologyLevel> levels;
    for (auto& entry : *list) {
      if (!entry) return;
      TopologyLevel level;
      auto name = entry->String("name");
      auto keys = entry->Strings("keys", kMaxKeysPerLevel);
      if (!name || !keys) return;
      level.name = std::move(*name);
      for (auto& key : *keys) {
        if (!IsTopologyLabel(key)) {
          entry->Error("keys", "gpusched keeps no node label '" + key +
                                   "': a topology key contains 'topology', 'topograph', "
                                   "'rack' or 'clique'");
          return;
        }
        level.keys.push_back(std::move(key));
      }
      levels.push_back(std::move(level));
    }
    settings.levels = std::move(levels);
  }

  void Print(SettingsSink& sink) const {
    sink.String("mode", settings.mode == TopologyMode::kRequired ? "required" : "preferred");
    sink.Number("holdSeconds", static_cast<double>(settings.hold.count()));
    sink.BeginList("levels");
    for (const TopologyLevel& level : settings.levels) {
      sink.BeginMap("");
      sink.String("name", level.name);
      sink.Strings("keys", level.keys);
      sink.End();
    }
    sink.End();
  }
};

// Per level and domain of `domains`, the summed room of `slots` (per node position).
std::vector<std::vector<int64_t>> Rooms(const TopologyIndex& domains,
                                        const std::vector<int64_t>& slots) {
  std::vector<std::vector<int64_t>> rooms(domains.levels().size());
  for (size_t l = 0; l < rooms.size(); ++l) {
    rooms[l].assign(domains.count(l), 0);
    for (size_t i = 0; i < slots.size(); ++i) {
      if (uint32_t d = domains.Of(l, i); d != kNoDomain) rooms[l][d] += slots[i];
    }
  }
  return rooms;
}

// Per level, the domain holding most of `positions` (ties: the lower number), or kNoDomain.
std::vector<uint32_t> Majority(const TopologyIndex& domains,
                               const std::vector<uint32_t>& positions) {
  std::vector<uint32_t> out(domains.levels().size(), kNoDomain);
  for (size_t l = 0; l < out.size(); ++l) {
    std::unordered_map<uint32_t, int> votes;
    int best = 0;
    for (uint32_t p : positions) {
      uint32_t d = domains.Of(l, p);
      if (d == kNoDomain) continue;
      int v = ++votes[d];
      if (v > best || (v == best && d < out[l])) {
        best = v;
        out[l] = d;
      }
    }
  }
  return out;
}

// What Prepare decided, per node position of the cycle's snapshot.
struct GangPlan : CycleData {
  bool scores = false;                    // the pod is a group member: ScoreName applies
  std::vector<double> score;              // per position, 0..100
  std::string_view refuse_all;            // non-empty: every node is refused with it
  std::vector<std::string_view> refused;  // per position: empty, or why it is refused
  bool filters() const { return !refuse_all.empty() || !refused.empty(); }
  // Refuses position `i` of `n` with `why`, unless it is refused already.
  void Refuse(size_t i, std::string_view why, size_t n) {
    if (refused.empty()) refused.resize(n);
    if (refused[i].empty()) refused[i] = why;
  }
};

struct Sibling {
  std::vector<uint32_t> positions;  // of placed siblings' nodes in the snapshot
  int32_t placed = 0;
};

Sibling PlacedSiblings(const PodGroupState* group, const PodInfo& pod,
                       const ClusterSnapshot& snapshot) {
  Sibling out;
  if (group == nullptr) return out;
  const std::string self = PodKey(pod);
  for (const GroupMember& m : group->members) {
    if (m.node.empty() || m.pod_key == self) continue;
    ++out.placed;
    if (uint32_t p = snapshot.IndexOf(m.node); p != NodeIndex::kAbsent) out.positions.push_back(p);
  }
  return out;
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

PluginEntry GangTopologyPlugin::Entry() {
  return PluginEntry{
      .name = kName,
      .extends = PointsOf<GangTopologyPlugin>(),
      .enabled = true,
      .weight = 50,
      .keys = {"levels", "mode", "holdSeconds"},
      .default_config = [] { return std::make_unique<ArgsConfig<GangTopologyArgs>>(); },
      .top_level_key = "topology",
      .make =
          [](const PluginConfig* config, const PodIntent&) {
            return std::make_unique<GangTopologyPlugin>(ArgsOf<GangTopologyArgs>(config).settings);
          }};
}

namespace {

// Other groups holding room against `pod`: sized, partly placed, within the hold, the newest
// first, at most kMaxHolds.
std::vector<const PodGroupState*> HoldsAgainst(const PodGroups& groups, const PodInfo& pod,
                                               std::chrono::seconds hold,
                                               std::chrono::steady_clock::time_point now) {
  std::vector<const PodGroupState*> holds;
  if (hold.count() <= 0) return holds;
  for (const PodGroupState& g : groups.all()) {
    if (g.size <= 0 || !g.any_placed() || g.key == pod.group.key) continue;
    if (now - g.first_placed >= hold || g.placed() >= g.size) continue;
    holds.push_back(&g);
  }
  std::sort(holds.begin(), holds.end(),
            [](const auto* a, const auto* b) { return a->first_placed > b->first_placed; });
  if (holds.size() > kMaxHolds) holds.resize(kMaxHolds);
  return holds;
}

// Refuses the nodes of each held domain (its members' innermost) where the pod would take room
// the held group still needs. Holds are judged for every GPU pod while one stands: only the nodes
// of the held domain, from the snapshot's index, are looked at.
void RefuseHeldRoom(Cycle& cycle, std::span<const PodGroupState* const> holds,
                    const TopologyIndex& domains, GangPlan& plan) {
  const PodInfo& pod = cycle.pod();
  const auto nodes = cycle.snapshot().nodes();
  for (const PodGroupState* g : holds) {
    Sibling placed = PlacedSiblings(g, pod, cycle.snapshot());
    const std::vector<uint32_t> where = Majority(domains, placed.positions);
    size_t level = 0;
    while (level < where.size() && where[level] == kNoDomain) ++level;
    if (level == where.size()) continue;  // its members sit in no domain: nothing to hold
    const auto held = domains.Members(level, where[level]);
    std::vector<int64_t> slots(held.size());
    int64_t room = 0;
    for (size_t m = 0; m < held.size(); ++m) {
      slots[m] = RoomFor(*nodes[held[m]], g->member_requests);
      room += slots[m];
    }
    const int64_t slack = room - (g->size - placed.placed);
    if (slack < 0) continue;  // the domain cannot complete it anyway
    std::string_view reason =
        cycle.Reason("room held for a pod group: ",
                     std::to_string(g->size - placed.placed) + " more members of " + g->key);
    for (size_t m = 0; m < held.size(); ++m) {
      if (slots[m] == 0) continue;
      const size_t i = held[m];
      if (slots[m] - RoomFor(*nodes[i], g->member_requests, &pod.requests) <= slack) continue;
      plan.Refuse(i, reason, nodes.size());
    }
  }
}

// What planning a group member's nodes reads, computed once per cycle.
struct MemberView {
  const GangTopologySettings& settings;
  const TopologyIndex& domains;
  const PodGroupState* group;  // null while the ledger knows no member
  int32_t size;                // the group's size, 0 when open-ended
  Sibling placed;
  std::vector<int64_t> slots;  // per position: members of this shape the node holds
  int64_t cluster_room = 0;
  std::vector<std::vector<int64_t>> rooms;  // per level, per domain: the sum of slots
  size_t levels() const { return settings.levels.size(); }
  double step() const { return kMaxNodeScore / static_cast<double>(levels() + 1); }
};

MemberView ViewOfMember(const Cycle& cycle, const GangTopologySettings& settings,
                        const TopologyIndex& domains) {
  const PodInfo& pod = cycle.pod();
  const PodGroups& groups = cycle.snapshot().groups();
  const auto nodes = cycle.snapshot().nodes();
  const PodGroupState* group = groups.Find(pod.group.key);
  MemberView view{.settings = settings,
                  .domains = domains,
                  .group = group,
                  .size = pod.group.size > 0
                              ? pod.group.size
                              : (group != nullptr ? group->size : groups.StatedSize(pod.group.key)),
                  .placed = PlacedSiblings(group, pod, cycle.snapshot()),
                  .slots = std::vector<int64_t>(nodes.size()),
                  .cluster_room = 0,
                  .rooms = {}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool pinned_out = !MeetsRequiredPins(pod.pins, nodes[i]->info.pin_labels);
    view.slots[i] = pinned_out ? 0 : RoomFor(*nodes[i], pod.requests);
    view.cluster_room += view.slots[i];
  }
  view.rooms = Rooms(domains, view.slots);
  return view;
}

// A member whose siblings are placed: scored by how close each node is to them, and (required,
// or within the hold) refused outside their innermost domain that still has room for it.
void PlanBesideSiblings(Cycle& cycle, const MemberView& view,
                        std::chrono::steady_clock::time_point now, GangPlan& plan) {
  const size_t levels = view.levels();
  const auto nodes = cycle.snapshot().nodes();
  std::vector<uint32_t> where = Majority(view.domains, view.placed.positions);
  size_t required = 0;
  while (required < levels && where[required] == kNoDomain) ++required;
  // Within the hold, a member also waits for its siblings' innermost domain that still has
  // room for it, rather than taking a node elsewhere: kube-scheduler judges only a sample of
  // the nodes per cycle (percentageOfNodesToScore), and its next cycle samples others.
  if (view.settings.mode == TopologyMode::kPreferred) {
    const bool held = view.group != nullptr && view.group->any_placed() &&
                      now - view.group->first_placed < view.settings.hold;
    while (required < levels &&
           (where[required] == kNoDomain || view.rooms[required][where[required]] < 1)) {
      ++required;
    }
    if (!held) required = levels;
  }
  std::string_view outside =
      required < levels ? cycle.Reason("outside its pod group's domain: ",
                                       view.settings.levels[required].name + " " +
                                           Quoted(view.domains.name(required, where[required])) +
                                           " of " + cycle.pod().group.key)
                        : std::string_view();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t l = 0; l < levels; ++l) {
      if (where[l] != kNoDomain && view.domains.Of(l, i) == where[l]) {
        plan.score[i] = view.step() * static_cast<double>(levels + 1 - l);
        break;
      }
    }
    if (required < levels && view.domains.Of(required, i) != where[required]) {
      plan.Refuse(i, outside, nodes.size());
    }
  }
}

// The members still to place: the group's size less those placed, or for an open-ended group
// at least the members already created (a JobSet or a Job creates them in one burst).
int64_t MembersToPlace(const MemberView& view, const PodInfo& pod) {
  const int64_t known = std::max<int64_t>(
      {view.group != nullptr ? static_cast<int64_t>(view.group->members.size()) : 1,
       view.group != nullptr ? view.group->expected : 0, pod.group.expected});
  return view.size > 0 ? view.size - view.placed.placed
                       : std::max<int64_t>(1, known - view.placed.placed);
}

// A group's first member: refused everywhere when the cluster cannot hold the group, scored to
// the tightest domain that holds it, and (required) refused where its innermost level cannot.
void PlanFirstMember(Cycle& cycle, const MemberView& view, GangPlan& plan) {
  const PodInfo& pod = cycle.pod();
  const size_t levels = view.levels();
  const int64_t need = MembersToPlace(view, pod);
  // The largest room of any domain, for the reason of a group that fits nowhere.
  int64_t largest = 0;
  std::string largest_level;
  for (size_t l = 0; l < levels; ++l) {
    for (int64_t r : view.rooms[l]) {
      if (r > largest) {
        largest = r;
        largest_level = view.settings.levels[l].name;
      }
    }
  }
  if (view.size > 0 && view.cluster_room < need) {
    // Without topology labels there is no domain to name.
    std::string largest_domain =
        largest > 0 ? ", largest " + largest_level + " holds " + std::to_string(largest) : "";
    plan.refuse_all =
        cycle.Reason("no room for the whole pod group: ",
                     "needs " + std::to_string(need) + largest_domain + ", cluster holds " +
                         std::to_string(view.cluster_room) + "; " + pod.group.key);
  }
  // Required mode binds the innermost level the cluster's nodes carry.
  size_t first = 0;
  while (first < levels && view.domains.count(first) == 0) ++first;
  std::string_view no_room =
      first < levels ? cycle.Reason("too little room here for the whole pod group: ",
                                    "needs " + std::to_string(need) + " in one " +
                                        view.settings.levels[first].name + "; " + pod.group.key)
                     : std::string_view();
  const auto nodes = cycle.snapshot().nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (view.slots[i] == 0) continue;
    for (size_t l = 0; l < levels; ++l) {
      uint32_t d = view.domains.Of(l, i);
      if (d == kNoDomain || view.rooms[l][d] < need) continue;
      // Tighter domains first: what stays free stays in large domains.
      double tightness = static_cast<double>(need) / static_cast<double>(view.rooms[l][d]);
      plan.score[i] = view.step() * (static_cast<double>(levels - l) + tightness);
      break;
    }
    if (view.settings.mode == TopologyMode::kRequired && first < levels && view.size > 0) {
      uint32_t d = view.domains.Of(first, i);
      if (d == kNoDomain || view.rooms[first][d] < need) plan.Refuse(i, no_room, nodes.size());
    }
  }
}

}  // namespace

void GangTopologyPlugin::Prepare(Cycle& cycle) const {
  if (cycle.gpu_demand().empty()) return;
  const PodInfo& pod = cycle.pod();
  const ClusterSnapshot& snapshot = cycle.snapshot();
  const auto now = std::chrono::steady_clock::now();
  std::vector<const PodGroupState*> holds =
      HoldsAgainst(snapshot.groups(), pod, settings_.hold, now);
  if (!pod.group.grouped() && holds.empty()) return;
  auto plan = std::make_unique<GangPlan>();
  std::shared_ptr<const TopologyIndex> domains = snapshot.TopologyFor(settings_.levels);
  RefuseHeldRoom(cycle, holds, *domains, *plan);
  if (pod.group.grouped()) {
    MemberView view = ViewOfMember(cycle, settings_, *domains);
    plan->scores = true;
    plan->score.assign(snapshot.nodes().size(), 0);
    if (!view.placed.positions.empty()) {
      PlanBesideSiblings(cycle, view, now, *plan);
    } else {
      PlanFirstMember(cycle, view, *plan);
    }
  }
  if (plan->scores || plan->filters()) cycle.Put(kName, std::move(plan));
}

bool GangTopologyPlugin::FiltersByName(const Cycle& cycle) const {
  const auto* plan = cycle.Get<GangPlan>(kName);
  return plan != nullptr && plan->filters();
}

Verdict GangTopologyPlugin::FilterName(const Cycle& cycle, std::string_view node_name,
                                       uint32_t number, const NodeState&) const {
  const auto* plan = cycle.Get<GangPlan>(kName);
  if (plan == nullptr) return Verdict::Pass();
  if (!plan->refuse_all.empty()) return Verdict::Unschedulable(plan->refuse_all);
  uint32_t p = number != NodeIndex::kAbsent ? number : cycle.snapshot().IndexOf(node_name);
  if (p == NodeIndex::kAbsent || plan->refused.empty() || plan->refused[p].empty()) {
    return Verdict::Pass();
  }
  return Verdict::Unschedulable(plan->refused[p]);
}

bool GangTopologyPlugin::ScoresPod(const Cycle& cycle) const {
  const auto* plan = cycle.Get<GangPlan>(kName);
  return plan != nullptr && plan->scores;
}

double GangTopologyPlugin::ScoreName(const Cycle& cycle, std::string_view node_name,
                                     uint32_t number) const {
  const auto* plan = cycle.Get<GangPlan>(kName);
  if (plan == nullptr || !plan->scores) return 0;
  uint32_t p = number != NodeIndex::kAbsent ? number : cycle.snapshot().IndexOf(node_name);
  return p == NodeIndex::kAbsent ? 0 : plan->score[p];
}

const std::vector<TopologyLevel>& GangTopologyLevels(const Engine& engine) {
  for (const WeightedPlugin& p : engine.plugins()) {
    if (const auto* gang = dynamic_cast<const GangTopologyPlugin*>(p.plugin.get())) {
      return gang->settings_.levels;
    }
  }
  return DefaultTopologyLevels();
}

}  // namespace gpusched
