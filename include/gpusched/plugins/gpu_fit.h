// gpu-fit: a node passes when, for every GPU resource the pod asks for, allocatable minus what
// bound pods use is at least the request.
//
// Rejections name the resource, never the node, so kube-scheduler can count identical reasons:
//   "node offers no <resource>"                  unresolvable (no device plugin for it)
//   "too few allocatable <resource> on node"     unresolvable (even an idle node is too small)
//   "Insufficient <resource>"                    unschedulable (preemption may free enough)
//   "no GPU device with enough free"             unschedulable; only where the snapshot's device
//                                                model keeps shares per device (the packing
//                                                simulator's, gpusched/model/device_model.h)
#pragma once

#include "gpusched/engine/plugin.h"

namespace gpusched {

class GpuFitPlugin : public NamedPlugin<GpuFitPlugin>, public PreparePlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "gpu-fit";
  void Prepare(Cycle& cycle) const override;
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  // True unless a configured GPU resource is named like a native one.
  bool FilterIgnoresNativeResources(const Cycle& cycle) const override;
};

}  // namespace gpusched
