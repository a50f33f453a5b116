#include "gpusched/plugins/sharing.h"

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {

Verdict SharingPlugin::Filter(const Cycle& cycle, const NodeState& node) const {
  bool exclusive = PodIntentOf(cycle).sharing == SharingMode::kExclusive;
  for (const auto& want : cycle.gpu_demand()) {
    if (exclusive && IsSharedResourceName(want.name)) {
      return Verdict::Unresolvable(
          cycle.Reason("exclusive GPUs requested but the pod asks for ", want.name));
    }
    SharingStrategy strategy = SharingOf(node.info, want.name);
    if (strategy == SharingStrategy::kNone) continue;
    if (exclusive) {
      return Verdict::Unresolvable(
          cycle.Reason("exclusive GPUs requested; node shares ",
                       want.name + " by " + std::string(ToString(strategy))));
    }
    bool refuses_more_than_one = strategy == SharingStrategy::kMps
                                     ? rules_.mps_fail_requests_greater_than_one
                                     : rules_.time_slicing_fail_requests_greater_than_one;
    if (refuses_more_than_one && cycle.pod().max_container_requests.units(want.name) > 1) {
      return Verdict::Unresolvable(
          cycle.Reason("device plugin allows at most 1 shared ",
                       want.name + " per container (" + std::string(ToString(strategy)) + ")"));
    }
  }
  return Verdict::Pass();
}

}  // namespace gpusched
