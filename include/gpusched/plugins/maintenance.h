// maintenance: keeps new GPU pods away from nodes that NVIDIA's operators are changing
// (shared/reference/nvidia-gpu-conventions.md section 4.3).
//
// Always unresolvable: product "...-MIG-INVALID", mig.config.state=failed,
// gpu-driver-upgrade-state=upgrade-failed.
// In progress (FailedNodes with action filter, score 0 with action score): mig.config.state
// pending or rebooting; a driver upgrade state other than absent or upgrade-done; the device
// plugin or the driver paused by the operator (gpu.deploy.device-plugin other than true,
// gpu.deploy.driver containing "paused").
// Score: 0 for nodes in progress; otherwise the healthy share (allocatable / capacity) of the GPU
// resources the pod asks for, so nodes with failed GPUs rank last.
#pragma once

#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

enum class MaintenanceAction {
  kFilter,  // nodes being reconfigured or upgraded are rejected (as FailedNodes)
  kScore,   // they stay eligible but score 0 in the maintenance plugin
};

// It filters, and scores when a policy gives it a weight.
class MaintenancePlugin : public NamedPlugin<MaintenancePlugin>,
                          public FilterPlugin,
                          public ScorePlugin {
 public:
  static constexpr std::string_view kName = "maintenance";
  explicit MaintenancePlugin(MaintenanceAction action) : action_(action) {}
  // On by default as a filter (weight 0); setting `action: filter | score`.
  static PluginEntry Entry();
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  bool FilterIgnoresNativeResources(const Cycle&) const override { return true; }
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  MaintenanceAction action_;
};

// The action a profile's copy of the plugin's settings names (PluginSetting::config).
MaintenanceAction MaintenanceActionOf(const PluginConfig* config);

// Why `node` is broken for GPU work (empty if it is not).
std::string_view BrokenReason(const NodeInfo& node);
// What `node` is in the middle of (empty if nothing).
std::string_view InProgressReason(const NodeInfo& node);

}  // namespace gpusched
