#include "gpusched/planning/why_pending.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "gpusched/engine/engine.h"
#include "gpusched/planning/placeholder_plan.h"

namespace gpusched {
namespace {

bool OffersAll(const NodeState& node, const ResourceList& demand) {
  return std::all_of(demand.begin(), demand.end(),
                     [&](const auto& r) { return node.info.allocatable.milli(r.name) > 0; });
}

// The first GPU resource of `demand` that `node` has too little of for kube-scheduler's own
// NodeResourcesFit (allocatable less what bound and assumed pods use), or empty.
std::string_view ShortOf(const NodeState& node, const ResourceList& demand) {
  for (const auto& r : demand) {
    if (node.free_milli(r.name) < r.milli) return r.name;
  }
  return {};
}

// The key with the highest count, the first in text order among equals.
template <class Key>
Key MostCommon(const std::map<Key, size_t>& counts) {
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return best->first;
}

struct Judged {
  std::string reason;
  std::string autoscaler;
};

// What the autoscaler column says of a pod (see the header).
std::string AutoscalerNote(const PodInfo& pod, bool in_tree_fits_refused,
                           const std::set<std::string_view>& with_placeholder) {
  std::string out(in_tree_fits_refused ? kAutoscalerBlind : kAutoscalerSees);
  out += pod.annotation("gpusched.io/node-affinity") ? "; webhook affinity added"
                                                     : "; no webhook affinity";
  if (with_placeholder.contains(pod.uid)) out += "; placeholder " + PlaceholderName(pod.uid);
  return out;
}

// One pod's reason (see the header).
Judged JudgeOne(const Policy& policy, const ClusterSnapshot& snapshot, const PodInfo& pod,
                const std::set<std::string_view>& with_placeholder) {
  if (snapshot.AssumptionOf(PodKey(pod)) != nullptr) return {std::string(kAssumedReason), "-"};
  if (snapshot.size() == 0)
    return {std::string(kNoNodesReason), AutoscalerNote(pod, false, with_placeholder)};
  PendingJudgement judged = JudgePendingPod(policy, snapshot, pod);
  if (judged.nodes.empty())
    return {std::string(kNoPinnedNodeReason), AutoscalerNote(pod, false, with_placeholder)};
  std::string reason = BestLookingReason(judged.nodes, judged.verdicts, judged.demand);
  std::string autoscaler =
      reason == kPassesReason
          ? "-"
          : AutoscalerNote(pod, !AutoscalerBlindNodes(judged, 1).empty(), with_placeholder);
  return {std::move(reason), std::move(autoscaler)};
}

// Adds `pod` to `group`, keeping the sample to the `max_sample` oldest (pods come oldest first).
void AddTo(PendingGroup& group, const PodInfo& pod, size_t max_sample) {
  ++group.pods;
  if (pod.created_unix > 0 &&
      (group.oldest_created_unix == 0 || pod.created_unix < group.oldest_created_unix)) {
    group.oldest_created_unix = pod.created_unix;
  }
  if (group.sample.size() < max_sample) {
    group.sample.push_back(pod.namespace_name + "/" + pod.name);
  }
}

}  // namespace

std::vector<const PodInfo*> OldestFirst(const std::vector<PodInfo>& pending) {
  std::vector<const PodInfo*> order;
  order.reserve(pending.size());
  for (const auto& p : pending) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const PodInfo* a, const PodInfo* b) {
    bool a_known = a->created_unix > 0;
    bool b_known = b->created_unix > 0;
    if (a_known != b_known) return a_known;
    return a->created_unix < b->created_unix;
  });
  return order;
}

bool PendingJudgement::passes_somewhere() const {
  return std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.passed(); });
}

PendingJudgement JudgePendingPod(const Policy& policy, const ClusterSnapshot& snapshot,
                                 const PodInfo& pod) {
  PendingJudgement out;
  std::vector<uint32_t> classes;
  for (size_t i = 0; i < snapshot.size(); ++i) {
    const NodeState& node = *snapshot.nodes()[i];
    // kube-scheduler's NodeAffinity filters these out before anything else.
    if (pod.pins.has_required_pins() && !MeetsRequiredPins(pod.pins, node.info.pin_labels)) {
      continue;
    }
    out.nodes.push_back(&node);
    classes.push_back(snapshot.classes()[i]);
  }
  if (out.nodes.empty()) return out;
  Policy::Judgement judged = policy.Judge(pod, snapshot);
  out.verdicts = judged.engine().Filter(
      *judged.cycle, Candidates{out.nodes, classes, snapshot.class_count(), {}, {}});
  out.demand = judged.cycle->gpu_demand();
  out.cycle = std::move(judged.cycle);
  return out;
}

std::vector<const NodeState*> AutoscalerBlindNodes(const PendingJudgement& judged, size_t max) {
  std::vector<const NodeState*> out;
  for (size_t i = 0; i < judged.nodes.size() && i < judged.verdicts.size() && out.size() < max;
       ++i) {
    if (!judged.verdicts[i].passed() && ShortOf(*judged.nodes[i], judged.demand).empty()) {
      out.push_back(judged.nodes[i]);
    }
  }
  return out;
}

int64_t WhyPendingReport::OldestWait(const PendingGroup& group) const {
  if (group.oldest_created_unix <= 0) return -1;
  return std::max<int64_t>(0, now_unix - group.oldest_created_unix);
}

std::string BestLookingReason(std::span<const NodeState* const> nodes,
                              std::span<const Verdict> verdicts, const ResourceList& demand) {
  // Per tier (see the header), the count of each reason as the pod's events give it.
  std::map<std::string, size_t> tiers[3];
  for (size_t i = 0; i < nodes.size() && i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    if (v.passed()) return std::string(kPassesReason);
    int tier = v.code == VerdictCode::kUnschedulable ? 0 : OffersAll(*nodes[i], demand) ? 1 : 2;
    std::string_view short_of = ShortOf(*nodes[i], demand);
    ++tiers[tier]
           [short_of.empty() ? std::string(v.reason) : "Insufficient " + std::string(short_of)];
  }
  for (const auto& counts : tiers) {
    if (!counts.empty()) return MostCommon(counts);
  }
  return std::string(kNoPinnedNodeReason);  // no node at all
}

WhyPendingReport ComputeWhyPending(const Policy& policy, const ClusterSnapshot& snapshot,
                                   const WhyPendingOptions& options) {
  WhyPendingReport r;
  r.policy_source = policy.spec().source;
  r.now_unix = options.now_unix != 0 ? options.now_unix
                                     : std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count();
  const std::vector<PodInfo>& pending = snapshot.gpu_pods().pending;
  r.pending = pending.size();
  const size_t by_work = options.max_node_judgements / std::max<size_t>(1, snapshot.size());
  const size_t judge_at_most = std::min(options.max_pods, by_work);
  const GpuResourceNames gpu_names(policy.spec().gpu_resources);
  std::map<std::tuple<std::string, std::string, std::string>, PendingGroup> groups;
  // The pods a placeholder stands for (planning/placeholder_plan.h), named in the autoscaler note.
  std::set<std::string_view> with_placeholder;
  for (const auto* list : {&pending, &snapshot.gpu_pods().bound}) {
    for (const PodInfo& p : *list) {
      if (IsPlaceholder(p)) {
        with_placeholder.insert(std::string_view(p.name).substr(kPlaceholderNamePrefix.size()));
      }
    }
  }
  for (const PodInfo* pod : OldestFirst(pending)) {
    if (Cancelled(options.cancellation)) {
      r.cancelled = true;
      return r;
    }
    Judged judged{std::string(kNotJudgedReason), "-"};
    if (r.judged < judge_at_most) {
      judged = JudgeOne(policy, snapshot, *pod, with_placeholder);
      ++r.judged;
    } else {
      ++r.skipped;
    }
    std::string shape = FormatResourceList(GpuDemand(*pod, gpu_names));
    PendingGroup& g = groups[{shape, judged.reason, judged.autoscaler}];
    if (g.pods == 0) {
      g.shape = shape;
      g.reason = judged.reason;
      g.autoscaler = judged.autoscaler;
    }
    AddTo(g, *pod, options.max_sample);
  }
  for (auto& [key, g] : groups) r.groups.push_back(std::move(g));
  std::stable_sort(r.groups.begin(), r.groups.end(),
                   [](const PendingGroup& a, const PendingGroup& b) { return a.pods > b.pods; });
  return r;
}

}  // namespace gpusched
