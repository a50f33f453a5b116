// PluginEntry: one plugin's registration, all in one place. Its name; the extension points it
// implements (filter, score, score by name); its defaults in a profile (on or off, weight); its
// own settings, read from a policy through SettingsSource and printed back through SettingsSink
// (policy/ implements both over YAML, so plugins see no YAML); and its factory, which gets the
// profile's copy of those settings and the profile's intent, never another plugin's settings.
// AllPlugins() lists the entries in evaluation order.
//
// Adding a plugin is its header and .cc (with a static Entry() when it has settings) and one line
// in src/plugins/all_plugins.cc; policy/ reads, checks, prints and builds it without knowing its
// name.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_requirements.h"

namespace gpusched {

// Names with numbers, in the order the policy states them (a product glob and its cost, a
// resource and its weight).
using NamedNumbers = std::vector<std::pair<std::string, double>>;

// A plugin's own settings as a policy states them: one mapping of keys to values, values that may
// be mappings or lists of mappings in turn. Every getter records an error naming the key (the
// policy reader adds file, line and path) and returns nullopt (or null) when the value is invalid.
class SettingsSource {
 public:
  virtual ~SettingsSource() = default;
  virtual bool Has(std::string_view key) const = 0;
  virtual std::optional<double> Number(std::string_view key, double min, double max) = 0;
  virtual std::optional<bool> Bool(std::string_view key) = 0;
  virtual std::optional<std::string> String(std::string_view key) = 0;
  virtual std::optional<std::string> OneOf(std::string_view key,
                                           std::span<const std::string_view> choices) = 0;
  // A mapping of names to numbers within [min, max], in order.
  virtual std::optional<NamedNumbers> NumberMap(std::string_view key, double min, double max) = 0;
  // A list of 1..max_entries strings.
  virtual std::optional<std::vector<std::string>> Strings(std::string_view key,
                                                          size_t max_entries) = 0;
  // The mapping under `key`, holding only `keys` (others are reported); null when it is not a
  // mapping.
  virtual std::unique_ptr<SettingsSource> Map(std::string_view key,
                                              std::span<const std::string_view> keys) = 0;
  // The mappings listed under `key`, each holding only `keys`; an entry that is not a mapping is
  // reported and null. nullopt, with `problem` reported, when the value is not a list, is empty or
  // lists more than `max_entries`.
  virtual std::optional<std::vector<std::unique_ptr<SettingsSource>>> List(
      std::string_view key, std::span<const std::string_view> keys, size_t max_entries,
      std::string_view problem) = 0;
  // Reports `problem` at `key`, or at this mapping itself when `key` is empty.
  virtual void Error(std::string_view key, std::string_view problem) = 0;
};

// A plugin's own settings printed back, in the shapes SettingsSource reads.
class SettingsSink {
 public:
  virtual ~SettingsSink() = default;
  virtual void Number(std::string_view key, double value) = 0;
  virtual void Bool(std::string_view key, bool value) = 0;
  virtual void String(std::string_view key, std::string_view value) = 0;
  virtual void NumberMap(std::string_view key, const NamedNumbers& values) = 0;
  virtual void Strings(std::string_view key, const std::vector<std::string>& values) = 0;
  // Opens the mapping under `key` (with an empty key, the next entry of the list open), or the list
  // under `key`; End closes the last one opened.
  virtual void BeginMap(std::string_view key) = 0;
  virtual void BeginList(std::string_view key) = 0;
  virtual void End() = 0;
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

// The usual PluginConfig: a plugin's settings as a copyable value type `Args`, its defaults as
// member initializers, with `void Read(SettingsSource&)` and `void Print(SettingsSink&) const`
// (kube-scheduler's typed plugin args). The factory takes them back with ArgsOf.
template <class Args>
class ArgsConfig final : public PluginConfig {
 public:
  std::unique_ptr<PluginConfig> Clone() const override {
    return std::make_unique<ArgsConfig>(*this);
  }
  void Read(SettingsSource& source) override { args.Read(source); }
  void Print(SettingsSink& sink) const override { args.Print(sink); }

  Args args;
};

// The Args `config` holds; the defaults when it holds none (null, or another plugin's).
template <class Args>
Args ArgsOf(const PluginConfig* config) {
  const auto* own = dynamic_cast<const ArgsConfig<Args>*>(config);
  return own ? own->args : Args{};
}

struct PluginEntry {
  std::string_view name;
  ExtensionPoints extends;  // PointsOf<the plugin class>()
  bool enabled = true;      // in a profile that does not name it
  double weight = 0;        // 0: not scored; a plugin that does not score takes no other
  // The keys of its own settings, and their defaults; empty and null for a plugin without any.
  std::vector<std::string_view> keys;
  std::function<std::unique_ptr<PluginConfig>()> default_config;
  // A top-level policy key that states these settings for every profile, kept from before plugins
  // had settings of their own: `<top_level_key>: V` reads as `plugins: {<name>: {<top_level_as>:
  // V}}`, or with top_level_as empty as `plugins: {<name>: V}`, V holding only `keys`. It never
  // turns the plugin on or off; a `plugins:` mapping (top-level or a profile's) overrides it.
  std::string_view top_level_key = {};  // empty: none
  std::string_view top_level_as = {};
  // `config` is the profile's copy of default_config's type, or null when there is none;
  // `profile_intent` the profile's GPU requirements, preferences and tenancy.
  std::function<std::unique_ptr<Plugin>(const PluginConfig* config,
                                        const PodIntent& profile_intent)>
      make;
};

// Every plugin, in evaluation order: node-wide judgements first, then per-resource counts, so a
// node's verdict names the most fundamental problem; scores after.
const std::vector<PluginEntry>& AllPlugins();
// The entry called `name`, or nullptr.
const PluginEntry* FindPlugin(std::string_view name);
// Every plugin's name, in evaluation order (for messages listing the known plugins).
const std::vector<std::string_view>& RegisteredPlugins();

}  // namespace gpusched
