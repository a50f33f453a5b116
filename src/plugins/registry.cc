#include "gpusched/plugins/registry.h"

#include <stdexcept>

#include "gpusched/plugins/gpu_fit.h"

namespace gpusched {
namespace {

std::unique_ptr<Plugin> MakePlugin(std::string_view name, const EngineConfig& config) {
  if (name == GpuFitPlugin::kName) return std::make_unique<GpuFitPlugin>();
  if (name == GpuBinpackPlugin::kName) {
    return std::make_unique<GpuBinpackPlugin>(config.binpack_weights);
  }
  return nullptr;
}

}  // namespace

std::vector<std::string_view> RegisteredPlugins() {
  return {GpuFitPlugin::kName, GpuBinpackPlugin::kName};
}

std::unique_ptr<Engine> BuildEngine(const EngineConfig& config) {
  std::vector<WeightedPlugin> plugins;
  for (const auto& spec : config.plugins) {
    auto plugin = MakePlugin(spec.name, config);
    if (!plugin) throw std::invalid_argument("unknown plugin \"" + spec.name + "\"");
    if (spec.weight < 0) {
      throw std::invalid_argument("plugin \"" + spec.name + "\" has a negative weight");
    }
    plugins.push_back(WeightedPlugin{std::move(plugin), spec.weight});
  }
  return std::make_unique<Engine>(GpuResourceNames(config.extra_gpu_resources),
                                  std::move(plugins));
}

}  // namespace gpusched
