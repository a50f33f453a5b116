#include "gpusched/policy/registry.h"

#include <algorithm>
#include <stdexcept>

#include "gpusched/plugins/gpu_binpack.h"
#include "gpusched/plugins/gpu_fit.h"
#include "gpusched/plugins/gpu_match.h"
#include "gpusched/plugins/maintenance.h"
#include "gpusched/plugins/mig_fit.h"
#include "gpusched/plugins/packing_scores.h"
#include "gpusched/plugins/product_reserve.h"
#include "gpusched/plugins/sharing.h"

namespace gpusched {
namespace {

std::unique_ptr<Plugin> MakePlugin(std::string_view name, const PolicySpec& policy,
                                   const ProfileSpec& profile) {
  if (name == MaintenancePlugin::kName) {
    return std::make_unique<MaintenancePlugin>(profile.maintenance_action);
  }
  if (name == GpuMatchPlugin::kName) return std::make_unique<GpuMatchPlugin>(policy.costs);
  if (name == SharingPlugin::kName) return std::make_unique<SharingPlugin>(policy.sharing);
  if (name == MigFitPlugin::kName) return std::make_unique<MigFitPlugin>();
  if (name == GpuFitPlugin::kName) return std::make_unique<GpuFitPlugin>();
  if (name == FgdPlugin::kName) return std::make_unique<FgdPlugin>();
  if (name == BestFitPlugin::kName) return std::make_unique<BestFitPlugin>();
  if (name == DotProductPlugin::kName) return std::make_unique<DotProductPlugin>();
  if (name == GpuPackingPlugin::kName) return std::make_unique<GpuPackingPlugin>();
  if (name == ConsolidatePlugin::kName) return std::make_unique<ConsolidatePlugin>();
  if (name == ProductReservePlugin::kName) return std::make_unique<ProductReservePlugin>();
  if (name == ProductReservePlugin::kName) return std::make_unique<ProductReservePlugin>();
  if (name == GpuBinpackPlugin::kName) {
    return std::make_unique<GpuBinpackPlugin>(profile.binpack_weights);
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string_view>& RegisteredPlugins() {
  // Node-wide judgements first, then per-resource counts, so a node's verdict names the most
  // fundamental problem.
  static const std::vector<std::string_view> kNames = {
      MaintenancePlugin::kName, GpuMatchPlugin::kName,    SharingPlugin::kName,
      MigFitPlugin::kName,      GpuFitPlugin::kName,      GpuBinpackPlugin::kName,
      FgdPlugin::kName,         BestFitPlugin::kName,     DotProductPlugin::kName,
      GpuPackingPlugin::kName,  ConsolidatePlugin::kName, ProductReservePlugin::kName};
  return kNames;
}

bool IsRegisteredPlugin(std::string_view name) {
  const auto& names = RegisteredPlugins();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::unique_ptr<Engine> BuildEngine(const PolicySpec& policy, const ProfileSpec& profile) {
  for (const auto& [name, setting] : profile.plugins) {
    if (!IsRegisteredPlugin(name)) throw std::invalid_argument("unknown plugin \"" + name + "\"");
    if (setting.weight < 0 || setting.weight > kMaxPluginWeight) {
      throw std::invalid_argument("plugin \"" + name + "\" weight must be within 0..100");
    }
  }
  std::vector<WeightedPlugin> plugins;
  for (std::string_view name : RegisteredPlugins()) {
    auto it = profile.plugins.find(name);
    if (it == profile.plugins.end() || !it->second.enabled) continue;
    plugins.push_back(WeightedPlugin{MakePlugin(name, policy, profile), it->second.weight});
  }
  return std::make_unique<Engine>(GpuResourceNames(policy.gpu_resources), std::move(plugins),
                                  profile.intent, policy.score_mapping, profile.gpu_pods_only,
                                  policy.target_workload);
}

}  // namespace gpusched
