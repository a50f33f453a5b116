// PodGroups: the pod groups of the GPU pods known (model/pod_group.h), each with its stated size,
// what one member asks for, and where its members are: the node each placed member is bound to or
// assumed on, and how many still wait. What gang placement reads (plugins/gang_topology.h).
//
// Built by the writer (ClusterLedger, the simulator) from the pods it keeps; immutable once built
// and shared by consecutive snapshots while no group member changes. Its size follows the group
// members kept, which the ledger's pod budget already bounds. Thread-safe once built.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

struct GroupMember {
  std::string pod_key;  // PodKey
  std::string node;     // where it is bound or assumed; empty while it waits
};

struct PodGroupState {
  std::string key;
  int32_t size = 0;              // stated size (by a member, else by another object); 0: open-ended
  int32_t expected = 0;          // members known to be coming at least (PodGroupRef::expected)
  ResourceList member_requests;  // what its first member asks for (cpu, memory, GPUs)
  std::vector<GroupMember> members;
  // When its earliest placed member was counted on a node; unset when none is.
  std::chrono::steady_clock::time_point first_placed{};

  int32_t placed() const;
  bool any_placed() const { return first_placed != std::chrono::steady_clock::time_point{}; }
};

// How many pods asking `shape` fit on `node` once `extra` (null: nothing) is also charged to it:
// the room a node has for a group's members. Cordoned nodes have none; a node that states no cpu
// or memory (a bare fixture) is not judged on them; capped at kMaxRoom.
inline constexpr int64_t kMaxRoom = int64_t{1} << 20;
int64_t RoomFor(const NodeState& node, const ResourceList& shape,
                const ResourceList* extra = nullptr);

// Group sizes stated by objects other than the pods (a Job, a PodGroup), by sizing key.
using StatedSizes = std::unordered_map<std::string, int32_t>;

class PodGroups {
 public:
  using Clock = std::chrono::steady_clock;

  // Collects members, then Build. Adding a member of a group already seen with another size keeps
  // the larger: a size is a floor the whole group must reach.
  class Builder {
   public:
    void Add(const PodInfo& pod, std::string_view node, Clock::time_point placed_at);
    // `stated`: the sizes objects other than the pods state, by sizing key (SizingKey), or null:
    // the size of a group none of whose members states one (a pod's own size wins), kept for
    // StatedSize.
    PodGroups Build(std::shared_ptr<const StatedSizes> stated = nullptr) &&;

   private:
    std::vector<PodGroupState> groups_;
    std::unordered_map<std::string, size_t> index_;  // key -> position in groups_
  };

  // The group of key `key`, or nullptr.
  const PodGroupState* Find(std::string_view key) const;
  // Every group, sorted by key.
  std::span<const PodGroupState> all() const { return groups_; }
  // The size another object states for the group `key` (0: none), whether or not a member of it
  // is known yet: kube-scheduler may ask about a pod before the watch has reported it.
  int32_t StatedSize(std::string_view key) const;

 private:
  std::vector<PodGroupState> groups_;  // sorted by key
  std::shared_ptr<const StatedSizes> stated_;
};

}  // namespace gpusched
