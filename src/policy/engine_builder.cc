#include "gpusched/policy/engine_builder.h"

#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/util/input_error.h"

namespace gpusched {

std::unique_ptr<Engine> BuildEngine(const PolicySpec& policy, const ProfileSpec& profile) {
  for (const auto& [name, setting] : profile.plugins) {
    const PluginEntry* entry = FindPlugin(name);
    if (!entry) throw InputError("unknown plugin \"" + name + "\"");
    if (setting.weight < 0 || setting.weight > kMaxPluginWeight) {
      throw InputError("plugin \"" + name + "\" weight must be within 0..100");
    }
    if (setting.weight != 0 && !entry->extends.score) {
      throw InputError("plugin \"" + name + "\" does not score: its weight must be 0");
    }
  }
  std::vector<WeightedPlugin> plugins;
  for (const PluginEntry& entry : AllPlugins()) {
    auto it = profile.plugins.find(entry.name);
    if (it == profile.plugins.end() || !it->second.enabled) continue;
    plugins.push_back(
        WeightedPlugin{entry.make(it->second.config.get(), profile.intent), it->second.weight});
  }
  EngineOptions options{.mapping = policy.score_mapping,
                        .gpu_pods_only = profile.gpu_pods_only,
                        .best_only = policy.filter_best_only};
  return std::make_unique<Engine>(GpuResourceNames(policy.gpu_resources), std::move(plugins),
                                  options);
}

}  // namespace gpusched
