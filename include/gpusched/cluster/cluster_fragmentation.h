// FragmentationOf: the packing benchmark's fragmentation measure (gpusched/packing/fragmentation.h)
// applied to a live cluster snapshot, for the /metrics gauges and the capacity report.
//
// The live inventory counts whole devices, so each node's free nvidia.com/gpu units are fully
// idle; its free MIG slices count by their compute slices. The target workload is the default
// policy's (LiveTargetWorkload: the common shapes of the pods seen, blended with the standard
// shapes). A node's idle GPUs count as fragment for a shape that needs more GPUs than the node has
// free, its free slices for a MIG shape whose profile it lacks. CPU is not tracked live and not
// part of the fit. Pure; thread-safe.
#pragma once

#include "gpusched/cluster/cluster_snapshot.h"

namespace gpusched {

struct ClusterFragmentation {
  double idle_gpus = 0;        // free nvidia.com/gpu units and MIG slices over all nodes
  double fragmented_gpus = 0;  // of those, weighted fragment; 0 when no workload is observed
};

ClusterFragmentation FragmentationOf(const ClusterSnapshot& snapshot);

}  // namespace gpusched
