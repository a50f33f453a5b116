#include "gpusched/plugins/maintenance.h"

#include <algorithm>

namespace gpusched {

std::string_view BrokenReason(const NodeInfo& node) {
  const GpuLabels& g = node.gpu;
  if (g.product.ends_with("-MIG-INVALID")) return "invalid MIG configuration on node";
  if (g.mig_config_state == MigConfigState::kFailed) return "MIG reconfiguration failed";
  if (g.driver_upgrade_state == "upgrade-failed") return "GPU driver upgrade failed";
  return {};
}

std::string_view InProgressReason(const NodeInfo& node) {
  const GpuLabels& g = node.gpu;
  if (g.mig_config_state == MigConfigState::kPending ||
      g.mig_config_state == MigConfigState::kRebooting) {
    return "MIG reconfiguration in progress";
  }
  if (!g.driver_upgrade_state.empty() && g.driver_upgrade_state != "upgrade-done") {
    return "GPU driver upgrade in progress";
  }
  if (!g.device_plugin_deploy.empty() && g.device_plugin_deploy != "true") {
    return "GPU device plugin paused";
  }
  if (g.driver_deploy.find("paused") != std::string::npos) return "GPU driver paused";
  return {};
}

namespace {

constexpr std::string_view kActions[] = {"filter", "score"};

// Its one setting, `action: filter | score`, with its default.
struct MaintenanceArgs {
  MaintenanceAction action = MaintenanceAction::kFilter;

  void Read(SettingsSource& source) {
    if (!source.Has("action")) return;
    if (auto a = source.OneOf("action", kActions)) {
      action = *a == "score" ? MaintenanceAction::kScore : MaintenanceAction::kFilter;
    }
  }
  void Print(SettingsSink& sink) const {
    sink.String("action", action == MaintenanceAction::kScore ? "score" : "filter");
  }
};

}  // namespace

PluginEntry MaintenancePlugin::Entry() {
  return PluginEntry{
      .name = kName,
      .extends = PointsOf<MaintenancePlugin>(),
      .enabled = true,
      .weight = 0,
      .keys = {"action"},
      .default_config = [] { return std::make_unique<ArgsConfig<MaintenanceArgs>>(); },
      .make =
          [](const PluginConfig* config, const PodIntent&) {
            return std::make_unique<MaintenancePlugin>(ArgsOf<MaintenanceArgs>(config).action);
          }};
}

MaintenanceAction MaintenanceActionOf(const PluginConfig* config) {
  return ArgsOf<MaintenanceArgs>(config).action;
}

Verdict MaintenancePlugin::Filter(const Cycle&, const NodeState& node) const {
  if (auto broken = BrokenReason(node.info); !broken.empty()) return Verdict::Unresolvable(broken);
  if (action_ == MaintenanceAction::kFilter) {
    if (auto busy = InProgressReason(node.info); !busy.empty()) {
      return Verdict::Unschedulable(busy);
    }
  }
  return Verdict::Pass();
}

double MaintenancePlugin::Score(const Cycle& cycle, const NodeState& node) const {
  if (!InProgressReason(node.info).empty()) return 0;
  double healthy = 1;
  for (const auto& want : cycle.gpu_demand()) {
    int64_t capacity = node.info.capacity.milli(want.name);
    if (capacity <= 0) continue;
    double share =
        static_cast<double>(node.info.allocatable.milli(want.name)) / static_cast<double>(capacity);
    healthy = std::min(healthy, share);
  }
  return kMaxNodeScore * std::clamp(healthy, 0.0, 1.0);
}

}  // namespace gpusched
