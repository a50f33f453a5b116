// A node as gpusched sees it: name, GPU labels, capacity and allocatable, cordon flag; and
// NodeState, the node plus what bound pods use of it.
//
// Built from the parts the codec extracts from a v1.Node. Value types; immutable once
// published in a ClusterSnapshot.
#ifndef GPUSCHED_MODEL_NODE_H_
#define GPUSCHED_MODEL_NODE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

struct NodeInfo {
  std::string name;
  std::string resource_version;
  GpuLabels gpu;
  ResourceList capacity;
  ResourceList allocatable;
  bool unschedulable = false;  // spec.unschedulable (cordoned)
};

struct NodeState {
  NodeInfo info;
  ResourceList used;  // sum of effective GPU requests of bound, non-terminal pods
  int32_t pod_count = 0;
  // Free milli-GPU per device (0..1000 each), in the packing simulator's model of GPU-sharing
  // device plugins; empty in the live server, which counts whole devices per resource.
  std::vector<int32_t> device_free_milli;

  // allocatable - used for `resource`, in milli-units (negative when over-committed).
  int64_t free_milli(std::string_view resource) const {
    return info.allocatable.milli(resource) - used.milli(resource);
  }
};

}  // namespace gpusched

#endif  // GPUSCHED_MODEL_NODE_H_
