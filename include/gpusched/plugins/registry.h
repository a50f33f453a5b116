// The plugin registry: which plugins exist, and an Engine built from an EngineConfig naming the
// enabled ones with their weights.
#ifndef GPUSCHED_PLUGINS_REGISTRY_H_
#define GPUSCHED_PLUGINS_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/engine/engine.h"
#include "gpusched/plugins/gpu_binpack.h"

namespace gpusched {

struct PluginSpec {
  std::string name;
  double weight = 0;  // 0: filter only
};

struct EngineConfig {
  // Resources beyond nvidia.com/gpu, gpu.shared and mig-* to treat as GPU resources.
  std::vector<std::string> extra_gpu_resources;
  std::vector<PluginSpec> plugins = {{"gpu-fit", 0}, {"gpu-binpack", 1}};
  ResourceWeights binpack_weights;
};

// Names of every registered plugin, in registration order.
std::vector<std::string_view> RegisteredPlugins();

// Builds the engine; throws std::invalid_argument naming an unknown plugin or a negative weight.
std::unique_ptr<Engine> BuildEngine(const EngineConfig& config);

}  // namespace gpusched

#endif  // GPUSCHED_PLUGINS_REGISTRY_H_
