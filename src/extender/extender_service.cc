#include "gpusched/extender/extender_service.h"

#include <map>
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

// One request's view of the world: the snapshot and policy it reads, the pod's cycle, and its
// candidates, with the known ones (those the engine can judge) and their positions.
struct Prepared {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::shared_ptr<const Policy> policy;
  const Engine* engine = nullptr;
  std::string_view profile;
  Candidates candidates;
  std::unique_ptr<Cycle> cycle;
  std::vector<const NodeState*> known;
  std::vector<size_t> positions;
};

Prepared Prepare(const ExtenderArgs& args, const Published<ClusterSnapshot>& snapshots,
                 const Published<Policy>& policies) {
  Prepared p;
  p.snapshot = snapshots.Get();
  p.policy = policies.Get();
  Policy::Selection selection = p.policy->Select(args.pod.info);
  p.engine = selection.engine;
  p.profile = selection.profile;
  p.candidates = Resolve(args, *p.snapshot);
  p.cycle = p.engine->NewCycle(args.pod.info, *p.snapshot, selection.error);
  const auto& nodes = p.candidates.nodes;
  p.known.reserve(nodes.size());
  p.positions.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] == nullptr) continue;
    p.known.push_back(nodes[i]);
    p.positions.push_back(i);
  }
  return p;
}

// Rejections per (plugin, verdict class), counted locally so the shared counters are touched once
// per class, not once per node.
void CountRejections(Metrics& metrics, const std::vector<Verdict>& verdicts,
                     const std::vector<std::string_view>& rejected_by) {
  std::map<std::pair<std::string_view, VerdictCode>, uint64_t> counts;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].passed()) ++counts[{rejected_by[i], verdicts[i].code}];
  }
  for (const auto& [key, n] : counts) {
    metrics.CountRejections(
        key.first, key.second == VerdictCode::kUnresolvable ? "unresolvable" : "unschedulable", n);
  }
}

// Demotes every passing node but the best-scored ones to unschedulable. Nodes missing from the
// inventory cannot be ranked, so they go too when a known node passes.
void KeepBestOnly(const Prepared& p, std::vector<Verdict>& verdicts,
                  std::vector<std::string_view>* rejected_by) {
  std::vector<const NodeState*> passing;
  std::vector<size_t> at;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].passed() || p.candidates.nodes[i] == nullptr) continue;
    passing.push_back(p.candidates.nodes[i]);
    at.push_back(i);
  }
  if (passing.empty()) return;
  std::vector<bool> keep(verdicts.size(), false);
  std::vector<bool> best = p.engine->BestScored(*p.cycle, passing);
  for (size_t k = 0; k < at.size(); ++k) keep[at[k]] = best[k];
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].passed() || keep[i]) continue;
    verdicts[i] = Verdict::Unschedulable(kNotBestReason);
    if (rejected_by) (*rejected_by)[i] = kNotBestRejection;
  }
}

}  // namespace

ExtenderService::ExtenderService(const Published<ClusterSnapshot>& snapshots,
                                 const Published<Policy>& policies, Metrics* metrics)
    : snapshots_(snapshots), policies_(policies), metrics_(metrics) {}

ExtenderFilterResult ExtenderService::Filter(const ExtenderArgs& args) const {
  Prepared p = Prepare(args, snapshots_, policies_);
  const Candidates& c = p.candidates;
  std::vector<std::string_view> known_rejected_by;
  std::vector<Verdict> known_verdicts =
      p.engine->Filter(*p.cycle, p.known, metrics_ ? &known_rejected_by : nullptr);

  std::vector<Verdict> verdicts(c.nodes.size());
  std::vector<std::string_view> rejected_by(metrics_ ? c.nodes.size() : 0, kInventoryRejection);
  if (!p.cycle->gpu_demand().empty()) {
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (c.nodes[i] == nullptr) verdicts[i] = Verdict::Unschedulable(kUnknownNodeReason);
    }
  }
  for (size_t k = 0; k < p.positions.size(); ++k) {
    verdicts[p.positions[k]] = known_verdicts[k];
    if (metrics_) rejected_by[p.positions[k]] = known_rejected_by[k];
  }
  if (p.policy->spec().filter_best_only)
    KeepBestOnly(p, verdicts, metrics_ ? &rejected_by : nullptr);
  if (metrics_) {
    metrics_->CountDecision("filter", p.profile);
    CountRejections(*metrics_, verdicts, rejected_by);
  }

  ExtenderFilterResult result;
  std::vector<std::string> passed;
  passed.reserve(verdicts.size());
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    switch (v.code) {
      case VerdictCode::kPass:
        passed.push_back(args.nodes ? (*args.nodes)[i].raw_json : std::string(c.names[i]));
        break;
      case VerdictCode::kUnschedulable:
        result.failed_nodes.emplace_back(c.names[i], v.reason);
        break;
      case VerdictCode::kUnresolvable:
        result.failed_and_unresolvable_nodes.emplace_back(c.names[i], v.reason);
        break;
    }
  }
  (args.nodes ? result.nodes_raw : result.node_names) = std::move(passed);
  return result;
}

HostPriorityList ExtenderService::Prioritize(const ExtenderArgs& args) const {
  Prepared p = Prepare(args, snapshots_, policies_);
  std::vector<int64_t> scores = p.engine->Prioritize(*p.cycle, p.known);
  if (metrics_) metrics_->CountDecision("prioritize", p.profile);
  HostPriorityList list(p.candidates.names.size());
  for (size_t i = 0; i < list.size(); ++i) list[i].host = std::string(p.candidates.names[i]);
  for (size_t k = 0; k < p.positions.size(); ++k) list[p.positions[k]].score = scores[k];
  return list;
}

}  // namespace gpusched
