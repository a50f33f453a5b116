#include "gpusched/extender/extender_service.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "gpusched/util/text_store.h"

namespace gpusched {
namespace {

// The text an answer's views point into: the request's (names in names mode, node objects in
// full-Nodes mode), and copies of what else it quotes (node names in full-Nodes mode, reasons).
struct AnswerText {
  std::shared_ptr<const void> request;
  TextStore copies;
};

// The nodes of one request as node states, with their content classes in names mode (nodes
// built from request objects are each a class of their own). Unknown names map to nullptr. Nodes
// built from request objects are owned here; names point into the request or the answer's text.
struct RequestNodes {
  std::vector<std::string_view> names;
  std::vector<const NodeState*> nodes;
  std::vector<uint32_t> classes;  // names mode only
  size_t class_count = 0;         // names mode only
  std::vector<std::unique_ptr<NodeState>> owned;
};

// The usage the snapshot records for `known` less the pod's own assumption, if it is on that
// node: a pod judged again is judged against the others, not against itself.
void CopyUsage(const NodeState& known, const Assumption* own, NodeState& out) {
  out.used = known.used;
  out.pod_count = known.pod_count;
  if (!own || own->node != known.info.name) return;
  for (const auto& r : own->requests) out.used.Add(r.name, -r.milli);
  out.used.DropZeros();
  --out.pod_count;
  --out.gpu_pod_count;
}

RequestNodes Resolve(const ExtenderArgs& args, const ClusterSnapshot& snapshot,
                     const Assumption* own, AnswerText& text) {
  RequestNodes c;
  if (args.node_names) {
    size_t n = args.node_names->size();
    c.names.reserve(n);
    c.nodes.reserve(n);
    c.classes.reserve(n);
    c.class_count = snapshot.class_count();
    auto all = snapshot.nodes();
    auto classes = snapshot.classes();
    for (const auto& name : *args.node_names) {
      uint32_t i = snapshot.IndexOf(name);
      c.names.push_back(name);
      c.nodes.push_back(i == NodeIndex::kAbsent ? nullptr : all[i].get());
      c.classes.push_back(i == NodeIndex::kAbsent ? 0 : classes[i]);
      if (own && i != NodeIndex::kAbsent && own->node == name) {
        // The node without the pod's own assumption: content no other node shares.
        auto state = std::make_unique<NodeState>(*all[i]);
        CopyUsage(*all[i], own, *state);
        c.nodes.back() = state.get();
        c.classes.back() = static_cast<uint32_t>(snapshot.class_count());
        c.class_count = snapshot.class_count() + 1;
        c.owned.push_back(std::move(state));
      }
    }
    return c;
  }
  for (const auto& wire : *args.nodes) {
    auto state = std::make_unique<NodeState>();
    state->info = wire.info;
    if (const NodeState* known = snapshot.Find(wire.info.name)) CopyUsage(*known, own, *state);
    c.names.push_back(text.copies.Keep(wire.info.name));
    c.nodes.push_back(state.get());
    c.owned.push_back(std::move(state));
  }
  return c;
}

// Some of a request's nodes, all known, as the engine takes them, with their positions in the
// request.
struct NodeSubset {
  std::vector<const NodeState*> nodes;
  std::vector<uint32_t> classes;  // empty in full-Nodes mode
  std::vector<std::string_view> names;
  std::vector<size_t> positions;
  size_t class_count = 0;

  Candidates candidates() const { return {nodes, classes, class_count, names}; }
};

// The known nodes of `request` at the positions where `take` holds.
template <class Take>
NodeSubset KnownNodes(const RequestNodes& request, Take&& take) {
  NodeSubset s;
  size_t n = request.nodes.size();
  s.nodes.reserve(n);
  s.classes.reserve(request.classes.size());
  s.names.reserve(n);
  s.positions.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (request.nodes[i] == nullptr || !take(i)) continue;
    s.nodes.push_back(request.nodes[i]);
    if (!request.classes.empty()) s.classes.push_back(request.classes[i]);
    s.names.push_back(request.names[i]);
    s.positions.push_back(i);
  }
  s.class_count = request.class_count;
  return s;
}

// One request's view of the world: the snapshot and policy it reads, the pod's cycle, and its
// candidates, with the known ones (those the engine can judge).
struct Prepared {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::shared_ptr<const Policy> policy;
  const Engine* engine = nullptr;
  std::string_view profile;
  const Assumption* own_assumption = nullptr;  // the pod's, from an earlier cycle
  std::shared_ptr<AnswerText> text;
  RequestNodes candidates;
  std::unique_ptr<Cycle> cycle;
  NodeSubset known;
};

Prepared Prepare(const ExtenderArgs& args, const Published<ClusterSnapshot>& snapshots,
                 const Published<Policy>& policies) {
  Prepared p;
  p.snapshot = snapshots.Get();
  p.policy = policies.Get();
  Policy::Selection selection = p.policy->Select(args.pod);
  p.engine = selection.engine;
  p.profile = selection.profile;
  p.text = std::make_shared<AnswerText>();
  p.text->request = args.text;
  p.own_assumption = args.pod.uid.empty() ? nullptr : p.snapshot->AssumptionOf(PodKey(args.pod));
  p.candidates = Resolve(args, *p.snapshot, p.own_assumption, *p.text);
  p.cycle = p.engine->NewCycle(args.pod, *p.snapshot, selection.error);
  p.known = KnownNodes(p.candidates, [](size_t) { return true; });
  return p;
}

// Tells `sink` that kube-scheduler is expected to bind the pod to `node`. Only GPU pods with an
// identity count: the watch's report of the pod must be able to replace the assumption.
void AssumeOn(AssumptionSink& sink, const Prepared& p, std::string_view node) {
  if (p.cycle->gpu_demand().empty() || p.cycle->pod().uid.empty()) return;
  sink.Assume(p.cycle->pod(), node);
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
                  std::vector<std::string_view>& rejected_by) {
  NodeSubset passing = KnownNodes(p.candidates, [&](size_t i) { return verdicts[i].passed(); });
  if (passing.nodes.empty()) return;
  std::vector<bool> keep(verdicts.size(), false);
  std::vector<bool> best = p.engine->BestScored(*p.cycle, passing.candidates());
  for (size_t k = 0; k < passing.positions.size(); ++k) keep[passing.positions[k]] = best[k];
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].passed() || keep[i]) continue;
    verdicts[i] = Verdict::Unschedulable(kNotBestReason);
    rejected_by[i] = kNotBestRejection;
  }
}

// Copies of the verdict reasons an answer quotes, each distinct reason once, in the answer's text:
// the cycle that holds them ends with the call. Reasons are few and stored once per cycle, so
// they are told apart by address.
class ReasonCopies {
 public:
  explicit ReasonCopies(AnswerText& text) : text_(text) {}
  std::string_view Of(std::string_view reason) {
    for (const auto& [original, copy] : copies_) {
      if (original.data() == reason.data() && original.size() == reason.size()) return copy;
    }
    copies_.emplace_back(reason, text_.copies.Keep(reason));
    return copies_.back().second;
  }

 private:
  AnswerText& text_;
  std::vector<std::pair<std::string_view, std::string_view>> copies_;
};

}  // namespace

ExtenderService::ExtenderService(const Published<ClusterSnapshot>& snapshots,
                                 const Published<Policy>& policies, Metrics* metrics,
                                 AssumptionSink* assumptions)
    : snapshots_(snapshots), policies_(policies), metrics_(metrics), assumptions_(assumptions) {}

ExtenderFilterResult ExtenderService::Filter(const ExtenderArgs& args) const {
  Prepared p = Prepare(args, snapshots_, policies_);
  // Filter starts each of kube-scheduler's cycles for the pod: an earlier one failed.
  if (assumptions_ && p.own_assumption) assumptions_->Forget(p.cycle->pod());
  const RequestNodes& c = p.candidates;
  // Who rejected each node goes with its verdict, for the metrics and for filterBestOnly's
  // demotions alike.
  std::vector<std::string_view> known_rejected_by;
  std::vector<Verdict> known_verdicts =
      p.engine->Filter(*p.cycle, p.known.candidates(), &known_rejected_by);

  std::vector<Verdict> verdicts(c.nodes.size());
  std::vector<std::string_view> rejected_by(c.nodes.size(), kInventoryRejection);
  if (!p.cycle->gpu_demand().empty()) {
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (c.nodes[i] == nullptr) verdicts[i] = Verdict::Unschedulable(kUnknownNodeReason);
    }
  }
  for (size_t k = 0; k < p.known.positions.size(); ++k) {
    verdicts[p.known.positions[k]] = known_verdicts[k];
    rejected_by[p.known.positions[k]] = known_rejected_by[k];
  }
  if (p.policy->spec().filter_best_only) KeepBestOnly(p, verdicts, rejected_by);
  if (metrics_) {
    metrics_->CountDecision("filter", p.profile);
    CountRejections(*metrics_, verdicts, rejected_by);
  }

  if (assumptions_) {
    size_t passing = 0;
    size_t at = 0;
    for (size_t i = 0; i < verdicts.size(); ++i) {
      if (verdicts[i].passed() && c.nodes[i] != nullptr) ++passing, at = i;
    }
    if (passing == 1) AssumeOn(*assumptions_, p, c.names[at]);
  }

  ExtenderFilterResult result;
  ReasonCopies reasons(*p.text);
  std::vector<std::string_view> passed;
  passed.reserve(verdicts.size());
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    switch (v.code) {
      case VerdictCode::kPass:
        passed.push_back(args.nodes ? std::string_view((*args.nodes)[i].raw_json) : c.names[i]);
        break;
      case VerdictCode::kUnschedulable:
        result.failed_nodes.emplace_back(c.names[i], reasons.Of(v.reason));
        break;
      case VerdictCode::kUnresolvable:
        result.failed_and_unresolvable_nodes.emplace_back(c.names[i], reasons.Of(v.reason));
        break;
    }
  }
  (args.nodes ? result.nodes_raw : result.node_names) = std::move(passed);
  result.text = p.text;
  return result;
}

HostPriorityList ExtenderService::Prioritize(const ExtenderArgs& args) const {
  Prepared p = Prepare(args, snapshots_, policies_);
  std::vector<int64_t> scores = p.engine->Prioritize(*p.cycle, p.known.candidates());
  if (metrics_) metrics_->CountDecision("prioritize", p.profile);
  HostPriorityList list;
  list.hosts.resize(p.candidates.names.size());
  for (size_t i = 0; i < list.hosts.size(); ++i) list.hosts[i].host = p.candidates.names[i];
  for (size_t k = 0; k < p.known.positions.size(); ++k) {
    list.hosts[p.known.positions[k]].score = scores[k];
  }
  if (assumptions_) {
    auto best = std::max_element(scores.begin(), scores.end());
    if (best != scores.end() && std::count(scores.begin(), scores.end(), *best) == 1) {
      AssumeOn(*assumptions_, p, p.candidates.names[p.known.positions[best - scores.begin()]]);
    }
  }
  list.text = p.text;
  return list;
}

}  // namespace gpusched
