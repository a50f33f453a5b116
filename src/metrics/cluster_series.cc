#include "gpusched/metrics/cluster_series.h"

#include <map>
#include <string>
#include <utility>

#include "gpusched/cluster/cluster_fragmentation.h"

namespace gpusched {
namespace {

// Capacity and allocation per (resource, product), summed over nodes.
struct GpuTotals {
  int64_t capacity_milli = 0;
  int64_t allocated_milli = 0;
};

std::map<std::pair<std::string, std::string>, GpuTotals> TotalsOf(const ClusterSnapshot& snap) {
  std::map<std::pair<std::string, std::string>, GpuTotals> totals;
  for (const auto& node : snap.nodes()) {
    for (const auto& amount : node->info.allocatable) {
      auto& t = totals[{amount.name, node->info.gpu.product}];
      t.capacity_milli += amount.milli;
      t.allocated_milli += node->used.milli(amount.name);
    }
  }
  return totals;
}

}  // namespace

void WriteClusterSeries(const ClusterSnapshot& snap, SeriesWriter& out) {
  out.Gauge("gpusched_inventory_nodes", "Nodes in the inventory")
      .Add({}, static_cast<double>(snap.size()));
  int64_t gpu_pods = 0;
  int64_t pods = 0;
  for (const auto& node : snap.nodes()) {
    gpu_pods += node->gpu_pod_count;
    pods += node->pod_count;
  }
  out.Gauge("gpusched_inventory_bound_pods",
            "Bound, non-terminal pods whose requests count against their nodes")
      .Add({}, static_cast<double>(pods));
  out.Gauge("gpusched_inventory_gpu_pods", "Bound, non-terminal pods that request GPU resources")
      .Add({}, static_cast<double>(gpu_pods));
  auto capacity = out.Gauge("gpusched_cluster_gpu_capacity",
                            "Allocatable units of each GPU resource, per GPU product");
  auto allocated = out.Gauge("gpusched_cluster_gpu_allocated",
                             "Units of each GPU resource requested by bound pods, per GPU product");
  for (const auto& [key, t] : TotalsOf(snap)) {
    SeriesLabels labels{{"resource", key.first}, {"product", key.second}};
    capacity.Add(labels, static_cast<double>(t.capacity_milli) / 1000);
    allocated.Add(labels, static_cast<double>(t.allocated_milli) / 1000);
  }
  ClusterFragmentation frag = FragmentationOf(snap);
  out.Gauge("gpusched_cluster_gpu_fragmentation_gpus",
            "Idle whole GPUs (nvidia.com/gpu) that the observed GPU workload could not use "
            "(the packing benchmark's fragmentation measure)")
      .Add({}, frag.fragmented_gpus);
  out.Gauge("gpusched_cluster_gpu_fragmentation_ratio",
            "gpusched_cluster_gpu_fragmentation_gpus over the idle GPUs (0 when none is idle)")
      .Add({}, frag.idle_gpus > 0 ? frag.fragmented_gpus / frag.idle_gpus : 0);
}

}  // namespace gpusched
