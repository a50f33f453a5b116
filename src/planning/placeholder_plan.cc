#include "gpusched/planning/placeholder_plan.h"

#include <algorithm>
#include <set>
#include <utility>

#include "gpusched/engine/plugin.h"
#include "gpusched/planning/why_pending.h"

namespace gpusched {
namespace {

const std::string* LabelOf(const PodInfo& pod, std::string_view key) {
  for (const auto& [k, v] : pod.labels) {
    if (k == key) return &v;
  }
  return nullptr;
}

PlaceholderToDelete Ending(const PodInfo& placeholder, const std::string& owner_uid,
                           PlaceholderEnd end) {
  return {placeholder.namespace_name, placeholder.name, placeholder.uid, owner_uid, end};
}

// Whether the node a placeholder was bound to is ready for its owner: gpusched passes the owner
// there, or refuses it only for what pods use (the placeholder's own share, most likely). Until
// then the placeholder keeps the node: a node is added before GPU Feature Discovery labels it,
// and kube-scheduler retries the owner on the placeholder's deletion, which must come when
// gpusched already sees the labels (its watch lags kube-scheduler's). At most holdSeconds after
// the placeholder was made.
bool NodeCameFor(const PendingJudgement& owner, const PodInfo& placeholder,
                 const AutoscalingSpec::Placeholders& spec, int64_t now_unix) {
  if (placeholder.created_unix <= 0 || now_unix - placeholder.created_unix >= spec.hold_seconds) {
    return true;
  }
  for (size_t i = 0; i < owner.nodes.size() && i < owner.verdicts.size(); ++i) {
    if (owner.nodes[i]->info.name == placeholder.node_name) {
      return owner.verdicts[i].code != VerdictCode::kUnresolvable;
    }
  }
  return false;  // the node does not meet the owner's pins (yet: labels to come)
}

}  // namespace

bool IsPlaceholder(const PodInfo& pod) {
  const std::string* owner = LabelOf(pod, kPlaceholderLabel);
  return owner != nullptr && !owner->empty() && pod.name.size() > kPlaceholderNamePrefix.size() &&
         pod.name.starts_with(kPlaceholderNamePrefix) &&
         std::string_view(pod.name).substr(kPlaceholderNamePrefix.size()) == *owner;
}

std::string_view PlaceholderEndName(PlaceholderEnd end) {
  switch (end) {
    case PlaceholderEnd::kOwnerBound:
      return "owner_bound";
    case PlaceholderEnd::kOwnerGone:
      return "owner_gone";
    case PlaceholderEnd::kOwnerFits:
      return "owner_fits";
    case PlaceholderEnd::kNodeCame:
      return "node_came";
    case PlaceholderEnd::kDisabled:
      return "disabled";
  }
  return "owner_gone";
}

namespace {

// The existing placeholders, each judged against its owner as the snapshot has it (pending or
// bound): those to remove go into `plan`, the others are kept by owner UID for the owners' pass.
struct ExistingPlaceholders {
  std::map<std::string_view, const PodInfo*> unbound;  // by owner UID
  std::map<std::string_view, const PodInfo*> bound;    // by owner UID: judged with its owner
  std::set<std::string_view> owners;  // owners with a placeholder, even one being removed
};

ExistingPlaceholders JudgeExistingPlaceholders(const GpuPods& pods, bool enabled,
                                               PlaceholderPlan& plan) {
  std::set<std::string_view> pending_owner;
  std::set<std::string_view> bound_owner;
  for (const PodInfo& p : pods.pending) {
    if (!IsPlaceholder(p)) pending_owner.insert(p.uid);
  }
  for (const PodInfo& p : pods.bound) {
    if (!IsPlaceholder(p)) bound_owner.insert(p.uid);
  }
  ExistingPlaceholders existing;
  auto judge = [&](const PodInfo& ph, bool bound) {
    const std::string& owner = *LabelOf(ph, kPlaceholderLabel);
    ++plan.existing;
    existing.owners.insert(owner);
    if (!enabled) {
      plan.remove.push_back(Ending(ph, owner, PlaceholderEnd::kDisabled));
    } else if (bound_owner.contains(owner)) {
      plan.remove.push_back(Ending(ph, owner, PlaceholderEnd::kOwnerBound));
    } else if (!pending_owner.contains(owner)) {
      plan.remove.push_back(Ending(ph, owner, PlaceholderEnd::kOwnerGone));
    } else {
      (bound ? existing.bound : existing.unbound).emplace(owner, &ph);
    }
  };
  for (const PodInfo& p : pods.pending) {
    if (IsPlaceholder(p)) judge(p, false);
  }
  for (const PodInfo& p : pods.bound) {
    if (IsPlaceholder(p)) judge(p, true);
  }
  return existing;
}

}  // namespace

PlaceholderPlan PlanPlaceholders(const Policy& policy, const ClusterSnapshot& snapshot,
                                 const PlaceholderHolds& holds, int64_t now_unix) {
  const AutoscalingSpec::Placeholders& spec = policy.spec().autoscaling.placeholders;
  const GpuPods& pods = snapshot.gpu_pods();
  PlaceholderPlan plan;
  ExistingPlaceholders existing = JudgeExistingPlaceholders(pods, spec.enabled, plan);
  if (!spec.enabled) return plan;

  size_t room = static_cast<size_t>(std::max<int64_t>(0, spec.max_pods));
  room = room > plan.existing ? room - plan.existing : 0;
  size_t judged = 0;
  for (const PodInfo* pod : OldestFirst(pods.pending)) {
    if (IsPlaceholder(*pod)) continue;
    auto placeholder = existing.unbound.find(pod->uid);
    auto arrived = existing.bound.find(pod->uid);
    bool has_placeholder = placeholder != existing.unbound.end() || arrived != existing.bound.end();
    // Too young, or never given one: only a pod with a placeholder needs judging to end it.
    bool candidate = pod->created_unix > 0 && now_unix - pod->created_unix >= spec.after_seconds &&
                     AsksOnlyThroughRequests(*pod) && pod->priority >= 0 && !pod->uid.empty() &&
                     snapshot.AssumptionOf(PodKey(*pod)) == nullptr;
    if (!candidate && !has_placeholder && !holds.contains(pod->uid)) continue;
    if (judged == kMaxJudgedPods) {
      ++plan.not_judged;
      continue;
    }
    ++judged;
    PendingJudgement judgement = JudgePendingPod(policy, snapshot, *pod);
    if (arrived != existing.bound.end()) {
      if (NodeCameFor(judgement, *arrived->second, spec, now_unix)) {
        plan.remove.push_back(Ending(*arrived->second, pod->uid, PlaceholderEnd::kNodeCame));
      }
      continue;
    }
    if (judgement.passes_somewhere()) {
      if (has_placeholder) {
        plan.remove.push_back(Ending(*placeholder->second, pod->uid, PlaceholderEnd::kOwnerFits));
      } else {
        plan.fit_but_wait.push_back(*pod);
      }
      continue;
    }
    std::vector<const NodeState*> blind = AutoscalerBlindNodes(judgement, kMaxExcludedNodes + 1);
    // The autoscaler sees it; or it has a placeholder, perhaps one whose node just came.
    if (blind.empty() || existing.owners.contains(pod->uid)) continue;
    ++plan.blind;
    auto hold = holds.find(pod->uid);
    if (hold != holds.end() && hold->second > now_unix) {
      ++plan.held;
      continue;
    }
    if (blind.size() > kMaxExcludedNodes) {
      ++plan.too_many_nodes;
      continue;
    }
    if (room == 0 || plan.create.size() == kMaxCreatesPerPass) {
      ++plan.over_budget;
      continue;
    }
    --room;
    PlaceholderToCreate c{*pod, {}};
    for (const NodeState* n : blind) c.excluded_nodes.push_back(n->info.name);
    std::sort(c.excluded_nodes.begin(), c.excluded_nodes.end());
    plan.create.push_back(std::move(c));
  }
  return plan;
}

}  // namespace gpusched
