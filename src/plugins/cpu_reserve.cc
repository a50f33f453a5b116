#include "gpusched/plugins/cpu_reserve.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/plugins/idle_view.h"
#include "gpusched/plugins/task_shape.h"

namespace gpusched {
namespace {

// The demand ratio, and the storage the placed view takes, reused from node to node (a cycle
// serves one thread at a time).
struct DemandRatio : CycleData {
  explicit DemandRatio(double ratio) : value(ratio) {}
  double value;
  mutable IdleBuffers placed;
};

}  // namespace

std::optional<double> CpuPerGpuMilli(std::span<const WeightedShape> workload) {
  double cpu = 0;
  double gpu = 0;
  for (const auto& w : workload) {
    if (!w.shape.wants_gpu()) continue;
    cpu += w.weight * static_cast<double>(w.shape.cpu_milli);
    gpu += w.weight * static_cast<double>(w.shape.num_gpu) * static_cast<double>(w.shape.gpu_milli);
  }
  if (cpu <= 0 || gpu <= 0) return std::nullopt;
  return cpu / gpu;
}

double StrandedGpuMilli(const NodeIdle& node, double cpu_per_gpu_milli) {
  double idle = static_cast<double>(DeviceIdleMilli(node));
  double servable = static_cast<double>(std::max<int64_t>(node.cpu_milli, 0)) / cpu_per_gpu_milli;
  return std::max(0.0, idle - servable);
}

void CpuReservePlugin::Prepare(Cycle& cycle) const {
  PrepareTaskShape(cycle);
  PrepareIdleView(cycle);
  if (TaskShapeOf(cycle).cpu_milli <= 0) return;
  if (!cycle.snapshot().Offers("cpu")) return;
  if (auto ratio = CpuPerGpuMilli(cycle.snapshot().observed_workload())) {
    cycle.Put(kName, std::make_unique<DemandRatio>(*ratio));
  }
}

bool CpuReservePlugin::ScoresPod(const Cycle& cycle) const {
  return cycle.Get<DemandRatio>(kName) != nullptr;
}

double CpuReservePlugin::Score(const Cycle& cycle, const NodeState& node) const {
  const DemandRatio* ratio = cycle.Get<DemandRatio>(kName);
  if (ratio == nullptr || !DeclaresCpu(node)) return kMaxNodeScore / 2;
  const TaskShape& pod = TaskShapeOf(cycle);
  const NodeIdle& before = *IdleViewOf(cycle, node);  // prepared with the ratio
  NodeIdle after = PlacedOn(before, pod, ratio->placed);
  double growth = StrandedGpuMilli(after, ratio->value) - StrandedGpuMilli(before, ratio->value);
  return kMaxNodeScore / (1 + std::exp(growth / kMilliPerGpu));
}

}  // namespace gpusched
