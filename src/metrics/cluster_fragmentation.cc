#include "gpusched/metrics/cluster_fragmentation.h"

#include <algorithm>
#include <limits>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

ClusterFragmentation FragmentationOf(const ClusterSnapshot& snapshot) {
  std::map<TaskShape, int64_t> counts;
  for (const auto& [gpus, pods] : snapshot.whole_gpu_requests()) {
    TaskShape shape;
    shape.num_gpu = static_cast<int32_t>(gpus);
    shape.gpu_milli = kMilliPerGpu;
    counts[shape] = pods;
  }
  std::vector<WeightedShape> workload = TargetWorkload(counts);
  ClusterFragmentation out;
  std::vector<int64_t> free_milli;
  for (const auto& node : snapshot.nodes()) {
    int64_t free_gpus = std::max<int64_t>(0, node->free_milli(kGpuResource) / kMilliPerGpu);
    out.idle_gpus += static_cast<double>(free_gpus);
    free_milli.assign(static_cast<size_t>(free_gpus), kMilliPerGpu);
    NodeIdle idle{.cpu_milli = std::numeric_limits<int64_t>::max(), .gpu_free_milli = free_milli,
                  .model = node->info.gpu.product};
    out.fragmented_gpus += NodeFragmentMilli(idle, workload) / kMilliPerGpu;
  }
  return out;
}

}  // namespace gpusched
