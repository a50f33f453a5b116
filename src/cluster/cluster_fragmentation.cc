#include "gpusched/cluster/cluster_fragmentation.h"

#include <algorithm>
#include <limits>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/packing/target_workload.h"

namespace gpusched {

ClusterFragmentation FragmentationOf(const ClusterSnapshot& snapshot) {
  ClusterFragmentation out;
  // The default policy's target workload: the gauge measures what the default fgd scores against.
  const std::vector<WeightedShape> workload =
      LiveTargetWorkload(snapshot.observed(), snapshot.standard_workload(), {});
  IdleBuffers buffers;
  for (const auto& node : snapshot.nodes()) {
    NodeIdle idle = IdleOf(*node, snapshot.device_model(), buffers);
    out.idle_gpus += static_cast<double>(IdleMilli(idle)) / kMilliPerGpu;
    out.fragmented_gpus += NodeFragmentMilli(idle, workload) / kMilliPerGpu;
  }
  return out;
}

}  // namespace gpusched
