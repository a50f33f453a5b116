#include "gpusched/planning/defrag_candidates.h"

#include <algorithm>
#include <utility>

#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"

namespace gpusched {
namespace {

// The controllers that recreate a deleted pod, wherever it then fits.
constexpr std::string_view kRecreatingKinds[] = {"ReplicaSet", "ReplicationController",
                                                 "StatefulSet"};

}  // namespace

DefragCandidates::DefragCandidates(const Policy& policy, const ClusterSnapshot& snapshot,
                                   std::span<const PodInfo> bound,
                                   std::span<const DisruptionBudget> budgets)
    : budgets_(budgets), on_node_(snapshot.size()) {
  for (const PodInfo& pod : bound) {
    uint32_t node = snapshot.IndexOf(pod.node_name);
    if (pod.node_name.empty() || pod.terminal() || node == NodeIndex::kAbsent) continue;
    if (!AsksForGpu(pod, policy.gpu_names())) continue;
    on_node_[node].push_back(pods_.size());
    if (pod.controller.known()) {
      by_controller_[pod.namespace_name + "/" + pod.controller.uid].push_back(pods_.size());
    }
    pods_.push_back(
        BoundPod{&pod, node, PodGpuMilli(pod), pod.namespace_name + "/" + pod.name, std::nullopt});
  }
  for (size_t i = 0; i < budgets.size(); ++i) {
    budgets_by_namespace_[budgets[i].namespace_name].push_back(i);
    budget_left_.push_back(budgets[i].has_status ? budgets[i].disruptions_allowed : 0);
  }
}

const std::vector<size_t>& DefragCandidates::BudgetsOf(size_t b) {
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

bool DefragCandidates::ReplicaElsewhere(size_t b, size_t target) const {
  const PodInfo& pod = *pods_[b].pod;
  auto it = by_controller_.find(pod.namespace_name + "/" + pod.controller.uid);
  if (it == by_controller_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](size_t o) { return o != b && pods_[o].node != target; });
}

std::optional<std::string> DefragCandidates::WhyStays(size_t b, const PodInfo& waiting,
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

std::vector<size_t> DefragCandidates::MovableOff(size_t target, const PodInfo& waiting,
                                                 std::map<std::string, size_t>& stays) {
  std::vector<size_t> movable;
  for (size_t b : on_node_[target]) {
    if (auto why = WhyStays(b, waiting, target)) {
      ++stays[*why];
    } else {
      movable.push_back(b);
    }
  }
  return movable;
}

void DefragCandidates::Rank(std::vector<size_t>& movable, const ResourceList& demand,
                            size_t limit) const {
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
  if (movable.size() > limit) movable.resize(limit);
}

bool DefragCandidates::BudgetsAllow(std::span<const size_t> moved) {
  std::map<size_t, int64_t> used;
  for (size_t b : moved) {
    for (size_t i : BudgetsOf(b)) {
      if (++used[i] > budget_left_[i]) return false;
    }
  }
  return true;
}

void DefragCandidates::Move(size_t b, size_t to) {
  auto& from_list = on_node_[pods_[b].node];
  from_list.erase(std::find(from_list.begin(), from_list.end(), b));
  on_node_[to].push_back(b);
  pods_[b].node = to;
  for (size_t i : BudgetsOf(b)) --budget_left_[i];
}

int64_t PodGpuMilli(const PodInfo& pod) {
  int64_t milli = 0;
  for (const auto& r : pod.requests) {
    const int64_t units = std::clamp<int64_t>(r.milli / 1000, 0, kMaxGpusPerNode);
    if (r.name == kGpuResource) milli += units * 1000;
    if (IsMigSliceResource(r.name)) milli += GpuEquivalentMilli(r.name, units);
  }
  return milli;
}

}  // namespace gpusched
