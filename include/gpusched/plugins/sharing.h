// sharing: the plugin that judges pods against GPUs shared by time-slicing and MPS.
//
// "sharing" names three things in a policy file, each with its own name here: this plugin
// (`plugins: {sharing: ...}`); its replica-request rules (ReplicaRequestRules: its two settings,
// which the policy's top-level `sharing:` mapping also states, the old spelling); and a profile's
// or pod's tenancy (`sharing: exclusive | any`, GpuTenancy in model/gpu_requirements.h), which this
// plugin enforces. How a node shares a resource is a fourth, the node's SharingStrategy (GFD's
// `sharing-strategy` label, model/gpu_labels.h).
//
// Filter, unresolvable in every case (preemption cannot change how a node shares its GPUs):
// - a pod of exclusive tenancy (gpusched.io/sharing: exclusive, or its profile's sharing:
//   exclusive) is kept off nodes where the resource it asks for is a shared replica, and a pod that
//   asks for a .shared resource cannot be exclusive at all;
// - a container asking for more than 1 unit of a resource the node shares, where the device
//   plugin's failRequestsGreaterThanOne would refuse it at admission (by default: MPS yes,
//   time-slicing no): the replica-request rules.
#pragma once

#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/plugins/pod_intent.h"

namespace gpusched {

// How many replicas of a shared resource one container may request: the device plugin's
// failRequestsGreaterThanOne (settings `mpsFailRequestsGreaterThanOne` and
// `timeSlicingFailRequestsGreaterThanOne`): true by default for MPS, false for time-slicing.
struct ReplicaRequestRules {
  bool mps_fail_requests_greater_than_one = true;
  bool time_slicing_fail_requests_greater_than_one = false;
};

class SharingPlugin : public NamedPlugin<SharingPlugin>, public PreparePlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "sharing";
  // `profile_intent`: the profile's tenancy (and the rest of its intent), before annotations.
  SharingPlugin(ReplicaRequestRules rules, PodIntent profile_intent)
      : rules_(rules), profile_intent_(std::move(profile_intent)) {}
  // On by default; a filter only.
  static PluginEntry Entry();
  void Prepare(Cycle& cycle) const override { PreparePodIntent(cycle, profile_intent_); }
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  bool FilterIgnoresNativeResources(const Cycle&) const override { return true; }

 private:
  ReplicaRequestRules rules_;
  PodIntent profile_intent_;
};

}  // namespace gpusched
