#include "gpusched/extender/extender_service.h"

#include <memory>
#include <vector>

namespace gpusched {
namespace {

// The candidates of one request as node states. Unknown names map to nullptr. Nodes built from
// request objects are owned here.
struct Candidates {
  std::vector<std::string_view> names;
  std::vector<const NodeState*> nodes;
  std::vector<std::unique_ptr<NodeState>> owned;
};

Candidates Resolve(const ExtenderArgs& args, const ClusterSnapshot& snapshot) {
  Candidates c;
  if (args.node_names) {
    for (const auto& name : *args.node_names) {
      c.names.push_back(name);
      c.nodes.push_back(snapshot.Find(name));
    }
    return c;
  }
  for (const auto& wire : *args.nodes) {
    auto state = std::make_unique<NodeState>();
    state->info = wire.info;
    if (const NodeState* known = snapshot.Find(wire.info.name)) {
      state->used = known->used;
      state->pod_count = known->pod_count;
    }
    c.names.push_back(wire.info.name);
    c.nodes.push_back(state.get());
    c.owned.push_back(std::move(state));
  }
  return c;
}

// The known candidates only, with their positions in the full list.
void KnownSubset(const Candidates& c, std::vector<const NodeState*>& nodes,
                 std::vector<size_t>& positions) {
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    if (c.nodes[i] == nullptr) continue;
    nodes.push_back(c.nodes[i]);
    positions.push_back(i);
  }
}

}  // namespace

ExtenderService::ExtenderService(const Published<ClusterSnapshot>& snapshots,
                                 const Published<Policy>& policies)
    : snapshots_(snapshots), policies_(policies) {}

ExtenderFilterResult ExtenderService::Filter(const ExtenderArgs& args) const {
  auto snapshot = snapshots_.Get();
  auto policy = policies_.Get();
  Policy::Selection selection = policy->Select(args.pod.info);
  const Engine* engine = selection.engine;
  Candidates c = Resolve(args, *snapshot);
  auto cycle = engine->NewCycle(args.pod.info, *snapshot, selection.error);

  std::vector<const NodeState*> known;
  std::vector<size_t> positions;
  KnownSubset(c, known, positions);
  std::vector<Verdict> known_verdicts = engine->Filter(*cycle, known);

  std::vector<Verdict> verdicts(c.nodes.size());
  if (!cycle->gpu_demand().empty()) {
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (c.nodes[i] == nullptr) verdicts[i] = Verdict::Unschedulable(kUnknownNodeReason);
    }
  }
  for (size_t k = 0; k < positions.size(); ++k) verdicts[positions[k]] = known_verdicts[k];

  ExtenderFilterResult result;
  std::vector<std::string> passed;
  std::vector<std::string> passed_raw;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    std::string name(c.names[i]);
    switch (v.code) {
      case VerdictCode::kPass:
        if (args.nodes) {
          passed_raw.push_back((*args.nodes)[i].raw_json);
        } else {
          passed.push_back(std::move(name));
        }
        break;
      case VerdictCode::kUnschedulable:
        result.failed_nodes.emplace_back(std::move(name), std::string(v.reason));
        break;
      case VerdictCode::kUnresolvable:
        result.failed_and_unresolvable_nodes.emplace_back(std::move(name), std::string(v.reason));
        break;
    }
  }
  if (args.nodes) {
    result.nodes_raw = std::move(passed_raw);
  } else {
    result.node_names = std::move(passed);
  }
  return result;
}

HostPriorityList ExtenderService::Prioritize(const ExtenderArgs& args) const {
  auto snapshot = snapshots_.Get();
  auto policy = policies_.Get();
  Policy::Selection selection = policy->Select(args.pod.info);
  const Engine* engine = selection.engine;
  Candidates c = Resolve(args, *snapshot);
  auto cycle = engine->NewCycle(args.pod.info, *snapshot, selection.error);

  std::vector<const NodeState*> known;
  std::vector<size_t> positions;
  KnownSubset(c, known, positions);
  std::vector<int64_t> scores = engine->Prioritize(*cycle, known);

  HostPriorityList list(c.names.size());
  for (size_t i = 0; i < c.names.size(); ++i) list[i].host = std::string(c.names[i]);
  for (size_t k = 0; k < positions.size(); ++k) list[positions[k]].score = scores[k];
  return list;
}

}  // namespace gpusched
