#include "gpusched/plugins/cpu_reserve.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/gpu_class_memo.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/plugins/idle_view.h"
#include "gpusched/plugins/task_shape.h"

namespace gpusched {
namespace {

// What the score reads of a node's GPU class: whether the node declares CPU, and its idle
// milli-GPU of devices before and after the pod is placed.
struct ClassIdle {
  bool declares_cpu = false;
  int64_t before = 0;
  int64_t after = 0;
};

// The demand ratio, the storage the placed view takes, reused from node to node, and the GPU
// classes measured. Mutable: a cycle serves one thread at a time.
struct DemandRatio : CycleData {
  explicit DemandRatio(double ratio) : value(ratio) {}
  double value;
  mutable IdleBuffers placed;
  mutable GpuClassMemo<ClassIdle> by_gpu_class;
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
  return StrandedGpuMilli(DeviceIdleMilli(node), node.cpu_milli, cpu_per_gpu_milli);
}

double StrandedGpuMilli(int64_t idle_gpu_milli, int64_t cpu_milli, double cpu_per_gpu_milli) {
  double servable = static_cast<double>(std::max<int64_t>(cpu_milli, 0)) / cpu_per_gpu_milli;
  return std::max(0.0, static_cast<double>(idle_gpu_milli) - servable);
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
  if (ratio == nullptr) return kMaxNodeScore / 2;
  const TaskShape& pod = TaskShapeOf(cycle);
  const ClassIdle& idle =
      ratio->by_gpu_class.Of(cycle, node, [&](const NodeState& n, ClassIdle& out) {
        out.declares_cpu = DeclaresCpu(n);
        if (!out.declares_cpu) return;
        const NodeIdle& before = *IdleViewOf(cycle, n);  // prepared with the ratio
        out.before = DeviceIdleMilli(before);
        out.after = DeviceIdleMilli(PlacedOn(before, pod, ratio->placed));
      });
  if (!idle.declares_cpu) return kMaxNodeScore / 2;
  int64_t cpu = IdleViewOf(cycle, node)->cpu_milli;
  double growth = StrandedGpuMilli(idle.after, CpuAfter(cpu, pod), ratio->value) -
                  StrandedGpuMilli(idle.before, cpu, ratio->value);
  return kMaxNodeScore / (1 + std::exp(growth / kMilliPerGpu));
}

}  // namespace gpusched
