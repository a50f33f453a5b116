// The plugin registrations (plugins/plugin_entry.h, src/plugins/all_plugins.cc): each entry
// declares what its plugin does, and the policy reader relies on that declaration.
#include "gpusched/plugins/plugin_entry.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace gpusched::plugin_entry_test {
namespace {

// The policy reader refuses a weight by the entry's points and the engine asks by the interfaces
// the plugin object implements: both derive from the plugin's type (PointsOf), and this checks,
// for every registered plugin with its default settings, that the entry was made from the class
// its factory builds.
TEST(PluginEntry, every_entry_declares_the_extension_points_its_plugin_implements) {
  for (const PluginEntry& entry : AllPlugins()) {
    std::unique_ptr<PluginConfig> config = entry.default_config ? entry.default_config() : nullptr;
    std::unique_ptr<Plugin> plugin = entry.make(config.get(), PodIntent{});
    ASSERT_NE(plugin, nullptr) << entry.name;
    EXPECT_EQ(plugin->name(), entry.name);
    EXPECT_EQ(PointsOf(*plugin), entry.extends) << entry.name;
    EXPECT_TRUE(entry.extends.filter || entry.extends.score) << entry.name;
    EXPECT_TRUE(!entry.extends.score_by_name || entry.extends.score) << entry.name;
    if (!entry.extends.score) {
      EXPECT_EQ(entry.weight, 0) << entry.name;
    }
    EXPECT_EQ(FindPlugin(entry.name), &entry);
  }
}

TEST(PluginEntry, the_filters_and_the_scorers_are_the_documented_ones) {
  std::set<std::string> filters, scorers;
  for (const PluginEntry& entry : AllPlugins()) {
    if (entry.extends.filter) filters.emplace(entry.name);
    if (entry.extends.score) scorers.emplace(entry.name);
  }
  EXPECT_EQ(filters, (std::set<std::string>{"maintenance", "gpu-match", "sharing", "mig-fit",
                                            "gpu-fit", "gang-topology"}));
  EXPECT_EQ(scorers,
            (std::set<std::string>{"maintenance", "gpu-match", "mig-fit", "gpu-binpack", "fgd",
                                   "best-fit", "dot-product", "gpu-packing", "consolidate",
                                   "product-reserve", "cpu-reserve", "gang-topology"}));
}

// A top-level spelling belongs to one plugin, and names a setting the plugin has.
TEST(PluginEntry, top_level_spellings_are_distinct_and_name_own_settings) {
  std::set<std::string_view> seen;
  for (const PluginEntry& entry : AllPlugins()) {
    if (entry.top_level_key.empty()) {
      EXPECT_TRUE(entry.top_level_as.empty()) << entry.name;
      continue;
    }
    EXPECT_TRUE(seen.insert(entry.top_level_key).second) << entry.top_level_key;
    ASSERT_TRUE(entry.default_config) << entry.name;
    if (!entry.top_level_as.empty()) {
      EXPECT_NE(std::find(entry.keys.begin(), entry.keys.end(), entry.top_level_as),
                entry.keys.end())
          << entry.name;
    }
  }
  EXPECT_EQ(seen, (std::set<std::string_view>{"costs", "sharing", "targetWorkload", "topology"}));
}

}  // namespace
}  // namespace gpusched::plugin_entry_test
