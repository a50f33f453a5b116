#include "gpusched/plugins/sharing.h"

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

constexpr std::string_view kMps = "mpsFailRequestsGreaterThanOne";
constexpr std::string_view kTimeSlicing = "timeSlicingFailRequestsGreaterThanOne";

// Its settings: the replica-request rules, read and printed under their policy keys.
struct ReplicaRequestArgs {
  ReplicaRequestRules rules;

  void Read(SettingsSource& source) {
    if (source.Has(kMps)) {
      if (auto b = source.Bool(kMps)) rules.mps_fail_requests_greater_than_one = *b;
    }
    if (source.Has(kTimeSlicing)) {
      if (auto b = source.Bool(kTimeSlicing)) {
        rules.time_slicing_fail_requests_greater_than_one = *b;
      }
    }
  }
  void Print(SettingsSink& sink) const {
    sink.Bool(kMps, rules.mps_fail_requests_greater_than_one);
    sink.Bool(kTimeSlicing, rules.time_slicing_fail_requests_greater_than_one);
  }
};

}  // namespace

PluginEntry SharingPlugin::Entry() {
  return PluginEntry{
      .name = kName,
      .extends = PointsOf<SharingPlugin>(),
      .enabled = true,
      .weight = 0,
      .keys = {kMps, kTimeSlicing},
      .default_config = [] { return std::make_unique<ArgsConfig<ReplicaRequestArgs>>(); },
      .top_level_key = "sharing",
      .make =
          [](const PluginConfig* config, const PodIntent& intent) {
            return std::make_unique<SharingPlugin>(ArgsOf<ReplicaRequestArgs>(config).rules,
                                                   intent);
          }};
}

Verdict SharingPlugin::Filter(const Cycle& cycle, const NodeState& node) const {
  bool exclusive = PodIntentOf(cycle).tenancy == GpuTenancy::kExclusive;
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
