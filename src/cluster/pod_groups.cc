#include "gpusched/cluster/pod_groups.h"

#include <algorithm>

namespace gpusched {

int64_t RoomFor(const NodeState& node, const ResourceList& shape, const ResourceList* extra) {
  if (node.info.unschedulable) return 0;
  int64_t room = kMaxRoom;
  bool asks = false;
  for (const auto& r : shape) {
    if (r.milli <= 0) continue;
    const int64_t allocatable = node.info.allocatable.milli(r.name);
    if (allocatable == 0 && IsNativeResource(r.name)) continue;
    asks = true;
    int64_t free = allocatable - node.used.milli(r.name) - (extra ? extra->milli(r.name) : 0);
    if (free < r.milli) return 0;
    room = std::min(room, free / r.milli);
  }
  if (int64_t pods = node.info.allocatable.units("pods"); pods > 0) {
    room = std::min<int64_t>(room, pods - node.pod_count - (extra ? 1 : 0));
  }
  return asks ? std::max<int64_t>(room, 0) : 0;
}

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

PodGroups PodGroups::Builder::Build(std::shared_ptr<const StatedSizes> stated) && {
  PodGroups out;
  out.stated_ = std::move(stated);
  for (PodGroupState& group : groups_) {
    if (group.size == 0) group.size = out.StatedSize(group.key);
  }
  std::sort(groups_.begin(), groups_.end(),
            [](const PodGroupState& a, const PodGroupState& b) { return a.key < b.key; });
  out.groups_ = std::move(groups_);
  return out;
}

int32_t PodGroups::StatedSize(std::string_view key) const {
  if (!stated_) return 0;
  auto it = stated_->find(std::string(SizingKey(key)));
  return it != stated_->end() ? it->second : 0;
}

const PodGroupState* PodGroups::Find(std::string_view key) const {
  auto it = std::lower_bound(groups_.begin(), groups_.end(), key,
                             [](const PodGroupState& g, std::string_view k) { return g.key < k; });
  return it != groups_.end() && it->key == key ? &*it : nullptr;
}

}  // namespace gpusched
