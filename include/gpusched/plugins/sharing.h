// sharing: time-slicing and MPS.
//
// Filter, unresolvable in every case (preemption cannot change how a node shares its GPUs):
// - a pod that wants exclusive GPUs (gpusched.io/sharing: exclusive, or its profile's sharing:
//   exclusive) is kept off nodes where the resource it asks for is a shared replica, and a pod that
//   asks for a .shared resource cannot be exclusive at all;
// - a container asking for more than 1 unit of a resource the node shares, where the device
//   plugin's failRequestsGreaterThanOne would refuse it at admission (by default: MPS yes,
//   time-slicing no): settings `mpsFailRequestsGreaterThanOne` and
//   `timeSlicingFailRequestsGreaterThanOne`, also stated as the policy's top-level `sharing`.
#ifndef GPUSCHED_PLUGINS_SHARING_H_
#define GPUSCHED_PLUGINS_SHARING_H_

#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/plugins/pod_intent.h"

namespace gpusched {

struct SharingRules {
  // The device plugin's failRequestsGreaterThanOne: true by default for MPS, false for
  // time-slicing.
  bool mps_fail_requests_greater_than_one = true;
  bool time_slicing_fail_requests_greater_than_one = false;
};

class SharingPlugin : public Plugin, public PreparePlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "sharing";
  // `profile_intent`: the profile's sharing mode (and the rest of its intent), before annotations.
  SharingPlugin(SharingRules rules, PodIntent profile_intent)
      : rules_(rules), profile_intent_(std::move(profile_intent)) {}
  // On by default; a filter only.
  static PluginEntry Entry();
  std::string_view name() const override { return kName; }
  void Prepare(Cycle& cycle) const override { PreparePodIntent(cycle, profile_intent_); }
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  bool FilterIgnoresNativeResources(const Cycle&) const override { return true; }

 private:
  SharingRules rules_;
  PodIntent profile_intent_;
};

}  // namespace gpusched

#endif  // GPUSCHED_PLUGINS_SHARING_H_
