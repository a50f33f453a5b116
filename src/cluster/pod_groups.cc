#include "gpusched/cluster/pod_groups.h"

#include <algorithm>

namespace gpusched {

int32_t PodGroupState::placed() const {
  return static_cast<int32_t>(std::count_if(members.begin(), members.end(),
                                            [](const GroupMember& m) { return !m.node.empty(); }));
}

void PodGroups::Builder::Add(const PodInfo& pod, std::string_view node,
                             Clock::time_point placed_at) {
  if (!pod.group.grouped()) return;
  auto [at, added] = index_.try_emplace(pod.group.key, groups_.size());
  if (added) {
    PodGroupState state;
    state.key = pod.group.key;
    state.member_requests = pod.requests;
    groups_.push_back(std::move(state));
  }
  PodGroupState* group = &groups_[at->second];
  group->size = std::max(group->size, pod.group.size);
  group->expected = std::max(group->expected, pod.group.expected);
  group->members.push_back(GroupMember{PodKey(pod), std::string(node)});
  if (!node.empty() && (!group->any_placed() || placed_at < group->first_placed)) {
    group->first_placed = placed_at;
  }
}

PodGroups PodGroups::Builder::Build() && {
  std::sort(groups_.begin(), groups_.end(),
            [](const PodGroupState& a, const PodGroupState& b) { return a.key < b.key; });
  PodGroups out;
  out.groups_ = std::move(groups_);
  return out;
}

const PodGroupState* PodGroups::Find(std::string_view key) const {
  auto it = std::lower_bound(groups_.begin(), groups_.end(), key,
                             [](const PodGroupState& g, std::string_view k) { return g.key < k; });
  return it != groups_.end() && it->key == key ? &*it : nullptr;
}

}  // namespace gpusched
