#include "gpusched/extender/extender_service.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/engine/node_subset.h"
#include "gpusched/util/text_store.h"

namespace gpusched {
namespace {

// The text an answer's views point into: the request's (names in names mode, node objects in
// full-Nodes mode), and copies of what else it quotes (node names in full-Nodes mode, reasons).
struct AnswerText {
  std::shared_ptr<const void> request;
  TextStore copies;
};

// The nodes of one request: every name, in request order, and those the engine can judge (known to
// the snapshot in names mode, every one in full-Nodes mode) as candidates, each with its position
// in the request, the one mapping between the two. In names mode the known nodes carry their
// content classes (nodes built from request objects are each a class of their own). Nodes built
// here are owned here; names point into the request or the answer's text.
struct RequestNodes {
  std::vector<std::string_view> names;  // all, in request order
  // The known ones, positions in `names`, with their names; their classes in names mode only.
  NodeSubset known;
  std::vector<std::unique_ptr<NodeState>> owned;

  bool all_known() const { return known.size() == names.size(); }

  void AddKnown(size_t position, const NodeState* node) {
    known.Add(position, node);
    known.names.push_back(names[position]);
  }
  // Scatters `known_values` (one per known node) over a request-long list filled with `fill`.
  template <class T>
  std::vector<T> ByPosition(std::vector<T> known_values, const T& fill) const {
    if (all_known()) return known_values;
    std::vector<T> out(names.size(), fill);
    for (size_t k = 0; k < known.size(); ++k) out[known.positions[k]] = std::move(known_values[k]);
    return out;
  }
};

RequestNodes Resolve(const ExtenderArgs& args, const ClusterSnapshot& snapshot,
                     const Assumption* own, AnswerText& text) {
  RequestNodes c;
  size_t n = args.node_names ? args.node_names->size() : args.nodes->size();
  c.names.reserve(n);
  c.known.positions.reserve(n);
  c.known.nodes.reserve(n);
  c.known.names.reserve(n);
  if (args.node_names) {
    c.known.classes.reserve(n);
    c.known.numbers.reserve(n);
    c.known.class_count = snapshot.class_count();
    auto all = snapshot.nodes();
    auto classes = snapshot.classes();
    c.names.assign(args.node_names->begin(), args.node_names->end());
    std::vector<uint32_t> numbers(n);
    snapshot.IndexAll(c.names, numbers);
    for (size_t position = 0; position < n; ++position) {
      const uint32_t i = numbers[position];
      const std::string_view name = c.names[position];
      if (i == NodeIndex::kAbsent) continue;
      c.known.numbers.push_back(i);  // by name: the node without its assumption keeps it
      if (own && own->node == name) {
        // The node without the pod's own assumption: content no other node shares.
        auto state = std::make_unique<NodeState>(*all[i]);
        CopyUsageWithout(*all[i], own, *state);
        c.AddKnown(position, state.get());
        c.known.classes.push_back(static_cast<uint32_t>(snapshot.class_count()));
        c.known.class_count = snapshot.class_count() + 1;
        c.owned.push_back(std::move(state));
        continue;
      }
      c.AddKnown(position, all[i].get());
      c.known.classes.push_back(classes[i]);
    }
    return c;
  }
  for (const auto& wire : *args.nodes) {
    auto state = std::make_unique<NodeState>();
    state->info = wire.info;
    if (const NodeState* known = snapshot.Find(wire.info.name)) {
      CopyUsageWithout(*known, own, *state);
    }
    c.names.push_back(text.copies.Keep(wire.info.name));
    c.AddKnown(c.names.size() - 1, state.get());
    c.owned.push_back(std::move(state));
  }
  return c;
}

// One request's view of the world: the snapshot and policy it reads, the pod's cycle, and its
// nodes.
struct Prepared {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::shared_ptr<const Policy> policy;
  const Engine* engine = nullptr;
  std::string_view profile;
  const Assumption* own_assumption = nullptr;  // the pod's, from an earlier cycle
  std::shared_ptr<AnswerText> text;
  RequestNodes candidates;
  std::unique_ptr<Cycle> cycle;
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
  p.cycle = selection.OpenCycle(args.pod, *p.snapshot);
  return p;
}

// A pod whose DRA claims gpusched does not model (`gpusched explain` says why).
void CountUnmodelled(Metrics& metrics, const Prepared& p) {
  if (!p.cycle->unmodelled().empty()) metrics.CountDraUnmodelled();
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
  std::vector<std::string_view> known_rejected_by;
  std::vector<Verdict> known_verdicts =
      p.engine->Filter(*p.cycle, c.known.candidates(), &known_rejected_by);
  // A node the inventory lacks cannot be judged: it fails a GPU pod, and it cannot be ranked, so
  // best-only leaves it out when a known node passes (the known nodes that pass, best-only applied,
  // all rank equal); otherwise it passes.
  size_t known_passing = 0;
  size_t at = 0;
  for (size_t k = 0; k < known_verdicts.size(); ++k) {
    if (known_verdicts[k].passed()) ++known_passing, at = c.known.positions[k];
  }
  Verdict unknown;
  std::string_view unknown_rejected_by = kInventoryRejection;
  if (!p.cycle->gpu_demand().empty()) {
    unknown = Verdict::Unschedulable(kUnknownNodeReason);
  } else if (p.policy->spec().filter_best_only &&
             LeftOutByBestOnly(
                 std::array{known_passing > 0 ? 0.0 : kFailedNode, kUnrankedNode})[1]) {
    unknown = Verdict::Unschedulable(kNotBestReason);
    unknown_rejected_by = kNotBestRejection;
  }
  std::vector<Verdict> verdicts = c.ByPosition(std::move(known_verdicts), unknown);
  if (metrics_) {
    metrics_->CountDecision("filter", p.profile);
    CountUnmodelled(*metrics_, p);
    CountRejections(*metrics_, verdicts,
                    c.ByPosition(std::move(known_rejected_by), unknown_rejected_by));
  }
  if (assumptions_ && known_passing == 1) AssumeOn(*assumptions_, p, c.names[at]);

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
        // A node best-only demoted is left out of the answer: kube-scheduler drops a node that is
        // in neither failure map silently, and since another node passed, the pod binds and no
        // event quotes a reason. Listing them cost kube-scheduler a decoded map entry and a status
        // per candidate node and call (docs/benchmarks.md, "Which registration").
        if (v.reason == kNotBestReason) break;
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

std::vector<HostPriority> LeanPriorities(std::span<const std::string_view> names,
                                         std::span<const int64_t> scores) {
  // kube-scheduler adds the same amount to every node it scores when the lowest score is taken off
  // each, so its choice is the same; and a node missing from the answer gets nothing from the
  // entry, exactly as a node scored 0. The answer then names only the nodes gpusched prefers: a
  // few, under the rank mapping, instead of every candidate (kube-scheduler decodes each entry).
  std::vector<HostPriority> out;
  if (scores.empty()) return out;
  int64_t floor = *std::min_element(scores.begin(), scores.end());
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > floor) out.push_back({names[i], scores[i] - floor});
  }
  return out;
}

HostPriorityList ExtenderService::Prioritize(const ExtenderArgs& args) const {
  Prepared p = Prepare(args, snapshots_, policies_);
  const RequestNodes& c = p.candidates;
  std::vector<int64_t> known_scores = p.engine->Prioritize(*p.cycle, c.known.candidates());
  if (metrics_) {
    metrics_->CountDecision("prioritize", p.profile);
    CountUnmodelled(*metrics_, p);
  }
  if (assumptions_) {
    auto best = std::max_element(known_scores.begin(), known_scores.end());
    if (best != known_scores.end() &&
        std::count(known_scores.begin(), known_scores.end(), *best) == 1) {
      AssumeOn(*assumptions_, p, c.known.names[best - known_scores.begin()]);
    }
  }
  std::vector<int64_t> scores = c.ByPosition(std::move(known_scores), int64_t{0});
  HostPriorityList list;
  list.hosts = LeanPriorities(c.names, scores);
  list.text = p.text;
  return list;
}

}  // namespace gpusched
