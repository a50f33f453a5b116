// PluginEntry: one plugin's registration, all in one place. Its name; its defaults in a profile
// (on or off, weight); its own settings, read from a policy through SettingsSource and printed
// back through SettingsSink (policy/ implements both over YAML, so plugins see no YAML); and its
// factory. AllPlugins() lists the entries in evaluation order.
//
// Adding a plugin is its header and .cc (with a static Entry()) and one line in
// src/plugins/all_plugins.cc; policy/ reads, prints and builds it without knowing its name.
#ifndef GPUSCHED_PLUGINS_PLUGIN_ENTRY_H_
#define GPUSCHED_PLUGINS_PLUGIN_ENTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/packing/target_workload.h"
#include "gpusched/plugins/sharing.h"

namespace gpusched {

// A plugin's own settings as a policy states them. Every getter records an error naming the key
// (the policy reader adds file, line and path) and returns nullopt when the value is invalid.
class SettingsSource {
 public:
  virtual ~SettingsSource() = default;
  virtual bool Has(std::string_view key) const = 0;
  virtual std::optional<double> Number(std::string_view key, double min, double max) = 0;
  virtual std::optional<std::string> OneOf(std::string_view key,
                                           std::span<const std::string_view> choices) = 0;
  // A mapping of names to numbers within [min, max].
  virtual std::optional<std::map<std::string, double, std::less<>>> NumberMap(std::string_view key,
                                                                              double min,
                                                                              double max) = 0;
};

class SettingsSink {
 public:
  virtual ~SettingsSink() = default;
  virtual void Number(std::string_view key, double value) = 0;
  virtual void String(std::string_view key, std::string_view value) = 0;
  virtual void NumberMap(std::string_view key,
                         const std::map<std::string, double, std::less<>>& values) = 0;
};

// A plugin's own settings, beyond `enabled` and `weight`. Each profile holds its own copy.
class PluginConfig {
 public:
  virtual ~PluginConfig() = default;
  virtual std::unique_ptr<PluginConfig> Clone() const = 0;
  // Reads the keys present, leaving the others as they are.
  virtual void Read(SettingsSource& source) = 0;
  // Prints every key, defaults included, so a printed policy reads back the same.
  virtual void Print(SettingsSink& sink) const = 0;
};

// What a policy states once for every plugin: product costs (for prefer.cheapest), the device
// plugin's sharing rules, and the target workload's blend.
struct PolicyWideSettings {
  std::vector<std::pair<std::string, double>> costs;  // product glob -> relative cost
  SharingRules sharing;
  TargetWorkloadSettings target_workload;  // fgd's
};

struct PluginEntry {
  std::string_view name;
  bool enabled = true;  // in a profile that does not name it
  double weight = 0;    // 0: filter only
  // The keys of its own settings, and their defaults; empty and null for a plugin without any.
  std::vector<std::string_view> keys;
  std::function<std::unique_ptr<PluginConfig>()> default_config;
  // `config` is the profile's copy of default_config's type, or null when there is none;
  // `profile_intent` the profile's GPU requirements, preferences and sharing mode.
  std::function<std::unique_ptr<Plugin>(const PluginConfig* config,
                                        const PolicyWideSettings& policy,
                                        const PodIntent& profile_intent)>
      make;
};

// Every plugin, in evaluation order: node-wide judgements first, then per-resource counts, so a
// node's verdict names the most fundamental problem; scores after.
const std::vector<PluginEntry>& AllPlugins();
// The entry called `name`, or nullptr.
const PluginEntry* FindPlugin(std::string_view name);

}  // namespace gpusched

#endif  // GPUSCHED_PLUGINS_PLUGIN_ENTRY_H_
