#include "gpusched/policy/policy_spec.h"

namespace gpusched {

std::map<std::string, PluginSetting, std::less<>> DefaultPluginSettings() {
  std::map<std::string, PluginSetting, std::less<>> settings;
  for (const PluginEntry& e : AllPlugins()) {
    std::shared_ptr<const PluginConfig> config;
    if (e.default_config) config = e.default_config();
    settings.emplace(std::string(e.name), PluginSetting{e.enabled, e.weight, std::move(config)});
  }
  return settings;
}

PolicySpec DefaultPolicySpec() {
  PolicySpec spec;
  ProfileSpec profile;
  profile.name = "default";
  profile.plugins = DefaultPluginSettings();
  spec.profiles.push_back(std::move(profile));
  return spec;
}

}  // namespace gpusched
