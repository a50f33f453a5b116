#include "gpusched/metrics/cluster_fragmentation.h"

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
  std::vector<int64_t> devices;
  for (const auto& node : snapshot.nodes()) {
    NodeIdle idle = IdleOf(*node, devices);
    for (int64_t free : devices) out.idle_gpus += static_cast<double>(free) / kMilliPerGpu;
    out.fragmented_gpus += NodeFragmentMilli(idle, workload) / kMilliPerGpu;
  }
  return out;
}

}  // namespace gpusched
