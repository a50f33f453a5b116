// A node as gpusched sees it: name, GPU labels, the labels pins judge it by, its topology labels,
// capacity and
// allocatable, cordon flag; and
// NodeState, the node plus what bound pods use of it.
//
// Built from the parts the codec extracts from a v1.Node. Value types; immutable once
// published in a ClusterSnapshot.
//
// A node's scheduling content is everything the engine's plugins may judge it by: GPU labels,
// pin labels, capacity, allocatable, cordon flag, usage, and its device shares when the snapshot's
// device model keeps them (gpusched/model/device_model.h: the simulator's, which keeps them apart
// from the node); not its name, resourceVersion or pod count. Nodes of equal content get equal
// verdicts and content-based scores, which lets the engine judge one node per class of equals
// (gpusched/cluster/cluster_snapshot.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

struct NodeInfo {
  std::string name;
  std::string resource_version;
  GpuLabels gpu;
  PinLabels pin_labels;  // what pods' node selectors and node affinity can name
  // Where it sits in the network (model/topology.h); not scheduling content: a per-host label
  // would make every node a class of its own.
  PinLabels topology;
  ResourceList capacity;
  ResourceList allocatable;
  bool unschedulable = false;     // spec.unschedulable (cordoned)
  size_t resources_not_kept = 0;  // extended resource entries past the decoder's budget
};

struct NodeState {
  NodeInfo info;
  ResourceList used;  // sum of effective requests (cpu, memory, GPU) of bound, non-terminal pods
  int32_t pod_count = 0;      // bound, non-terminal pods
  int32_t gpu_pod_count = 0;  // of which ask for GPU resources

  // allocatable - used for `resource`, in milli-units (negative when over-committed).
  int64_t free_milli(std::string_view resource) const {
    return info.allocatable.milli(resource) - used.milli(resource);
  }
};

// Scoring many nodes one after the other waits on memory for each one's state and amounts: these
// ask the CPU to fetch them ahead, in two steps a few nodes apart, since the amounts' address is
// read from the state. Hints only: they change nothing and may be called on any live node.
inline void PrefetchState(const NodeState& node) {
  __builtin_prefetch(&node.info.allocatable);
  __builtin_prefetch(&node.used);
}
inline void PrefetchAmounts(const NodeState& node) {
  __builtin_prefetch(node.info.allocatable.storage());
  __builtin_prefetch(node.used.storage());
}

// gpusched/model/device_model.h, which includes this header.
class DeviceModel;

// What of a node's usage scheduling content counts: all of it, or only what its pods use of
// extended resources (not of cpu, memory, pods: IsNativeResource).
enum class UsedResources { kAll, kExtendedOnly };
// Whether `a` and `b` have the same scheduling content in a snapshot of device model `devices`.
bool SameSchedulingContent(const NodeState& a, const NodeState& b, const DeviceModel& devices,
                           UsedResources which = UsedResources::kAll);
// A hash of part of the scheduling content under `devices`: equal content gives equal hashes.
uint64_t SchedulingContentHash(const NodeState& node, const DeviceModel& devices,
                               UsedResources which = UsedResources::kAll);

// SchedulingContentHash under whole devices (DeviceModel::WholeDevices), for both kinds of usage:
// what a snapshot's builder can compute once per node content and hand to every snapshot that
// holds that content, instead of each snapshot hashing every node again.
struct ContentHashes {
  uint64_t all = 0;
  uint64_t extended_only = 0;
};
ContentHashes WholeDeviceContentHashes(const NodeState& node);

}  // namespace gpusched
