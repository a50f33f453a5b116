#include "gpusched/plugins/gpu_fit.h"

#include <limits>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/plugins/task_shape.h"

namespace gpusched {

void GpuFitPlugin::Prepare(Cycle& cycle) const { PrepareTaskShape(cycle); }

bool GpuFitPlugin::FilterIgnoresNativeResources(const Cycle& cycle) const {
  // It reads the amounts of the pod's GPU resources only (the CPU check of the per-device model
  // is kube-scheduler's).
  for (const auto& want : cycle.gpu_demand()) {
    if (IsNativeResource(want.name)) return false;
  }
  return true;
}

Verdict GpuFitPlugin::Filter(const Cycle& cycle, const NodeState& node) const {
  for (const auto& want : cycle.gpu_demand()) {
    int64_t allocatable = node.info.allocatable.milli(want.name);
    if (allocatable <= 0 && node.info.capacity.milli(want.name) <= 0) {
      return Verdict::Unresolvable(cycle.Reason("node offers no ", want.name));
    }
    if (allocatable > kMaxGpusPerNode * 1000) {
      return Verdict::Unresolvable(cycle.Reason(
          "node offers more ",
          want.name + " than gpusched judges (" + std::to_string(kMaxGpusPerNode) + ")"));
    }
    if (allocatable < want.milli) {
      return Verdict::Unresolvable(
          cycle.Reason("too few allocatable ", want.name + std::string(" on node")));
    }
    if (allocatable - node.used.milli(want.name) < want.milli) {  // free_milli, one lookup less
      return Verdict::Unschedulable(cycle.Reason("Insufficient ", want.name));
    }
  }
  // Where the snapshot's device model keeps shares per device, the total is not enough: a share
  // needs one device with enough free, whole GPUs need fully free devices. Whole devices counted
  // from the total always have what the checks above found.
  const DeviceModel devices = cycle.snapshot().device_model();
  if (KeepsDeviceShares(node, devices)) {
    IdleBuffers buffers;
    NodeIdle idle = IdleOf(node, devices, buffers);
    idle.cpu_milli = std::numeric_limits<int64_t>::max();  // CPU is kube-scheduler's to check
    if (!ShapeFits(idle, TaskShapeOf(cycle))) {
      return Verdict::Unschedulable(cycle.Reason("no GPU device with enough free"));
    }
  }
  return Verdict::Pass();
}

}  // namespace gpusched
