#include "gpusched/plugins/gpu_fit.h"

namespace gpusched {

Verdict GpuFitPlugin::Filter(const Cycle& cycle, const NodeState& node) const {
  for (const auto& want : cycle.gpu_demand()) {
    int64_t allocatable = node.info.allocatable.milli(want.name);
    if (allocatable <= 0 && node.info.capacity.milli(want.name) <= 0) {
      return Verdict::Unresolvable(cycle.Reason("node offers no ", want.name));
    }
    if (allocatable < want.milli) {
      return Verdict::Unresolvable(
          cycle.Reason("too few allocatable ", want.name + std::string(" on node")));
    }
    if (node.free_milli(want.name) < want.milli) {
      return Verdict::Unschedulable(cycle.Reason("Insufficient ", want.name));
    }
  }
  return Verdict::Pass();
}

}  // namespace gpusched
