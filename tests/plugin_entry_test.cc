// The plugin registrations (plugins/plugin_entry.h, src/plugins/all_plugins.cc): each entry
// declares what its plugin does, the policy reader relies on that declaration, and
// docs/plugins.md says it. The checks are functions of a list of entries, so that the recipe test
// at the end runs them on the registry with a plugin added the way docs/architecture.md's
// "Adding a plugin" says, as a real addition would meet them.
#include "gpusched/plugins/plugin_entry.h"

#include <istream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/markdown.h"
#include "testing/test_support.h"

namespace gpusched::plugin_entry_test {
namespace {

const std::string kPluginsDoc = std::string(GPUSCHED_SOURCE_DIR) + "/docs/plugins.md";

// One line per way `entry` disagrees with the plugin its factory builds with default settings:
// the policy reader refuses a weight by the entry's points and the engine asks by the interfaces
// the object implements, both derived from the plugin's type (PointsOf), so an entry made from
// another class than its factory builds shows here.
std::vector<std::string> EntryProblems(const PluginEntry& entry) {
  std::vector<std::string> problems;
  const std::string name(entry.name);
  std::unique_ptr<PluginConfig> config = entry.default_config ? entry.default_config() : nullptr;
  std::unique_ptr<Plugin> plugin = entry.make(config.get(), PodIntent{});
  if (!plugin) return {name + ": its factory builds nothing"};
  if (plugin->name() != entry.name) problems.push_back(name + ": its plugin has another name");
  if (PointsOf(*plugin) != entry.extends) problems.push_back(name + ": points not its plugin's");
  if (!entry.extends.filter && !entry.extends.score) problems.push_back(name + ": extends nothing");
  if (entry.extends.score_by_name && !entry.extends.score) {
    problems.push_back(name + ": scores by name but is no scorer");
  }
  if (!entry.extends.score && entry.weight != 0) {
    problems.push_back(name + ": a weight, but it does not score");
  }
  return problems;
}

// What a plugin extends, as far as docs/plugins.md says it.
struct Points {
  bool filter = false;
  bool score = false;
  bool operator==(const Points&) const = default;
};

// What each plugin's section heading in the text of docs/plugins.md says it extends: "## NAME
// (filter)", "## NAME (score; off by default)", "## A, B (filter and score)", "## NAME (filter by
// node name and score; ...)". Headings inside fenced code are not headings.
std::map<std::string, Points> DocumentedPoints(const std::string& plugins_doc) {
  static const std::regex heading(
      R"(## ([a-z]+(?:-[a-z]+)*(?:, [a-z]+(?:-[a-z]+)*)*) \(([^;)]*)[^)]*\))");
  std::map<std::string, Points> out;
  std::istringstream in(plugins_doc);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) fenced = !fenced;
    std::smatch m;
    if (fenced || !std::regex_match(line, m, heading)) continue;
    const std::string what = m[2];
    const Points points{what.find("filter") != std::string::npos,
                        what.find("score") != std::string::npos};
    std::istringstream names(m[1].str());
    for (std::string name; std::getline(names >> std::ws, name, ',');) out[name] = points;
  }
  return out;
}

// One line per plugin of `entries` whose section in docs/plugins.md (its text `plugins_doc`) is
// missing or says other points than it extends, and per section of no plugin.
std::vector<std::string> DocumentationProblems(std::span<const PluginEntry> entries,
                                               const std::string& plugins_doc) {
  std::map<std::string, Points> documented = DocumentedPoints(plugins_doc);
  std::vector<std::string> problems;
  for (const PluginEntry& entry : entries) {
    const std::string name(entry.name);
    auto it = documented.find(name);
    if (it == documented.end()) {
      problems.push_back(name + ": no section in docs/plugins.md");
    } else if (it->second != Points{entry.extends.filter, entry.extends.score}) {
      problems.push_back(name + ": docs/plugins.md's heading names other points");
    }
    if (it != documented.end()) documented.erase(it);
  }
  for (const auto& [name, points] : documented) {
    problems.push_back(name + ": a section in docs/plugins.md, no plugin");
  }
  return problems;
}

const std::vector<std::string> kNone;

TEST(PluginEntry, every_entry_declares_the_extension_points_its_plugin_implements) {
  for (const PluginEntry& entry : AllPlugins()) {
    EXPECT_EQ(EntryProblems(entry), kNone);
    EXPECT_EQ(FindPlugin(entry.name), &entry);
  }
}

TEST(PluginEntry, the_filters_and_the_scorers_are_the_documented_ones) {
  EXPECT_EQ(DocumentationProblems(AllPlugins(), testing::ReadFile(kPluginsDoc)), kNone);
  EXPECT_EQ(DocumentedPoints(testing::ReadFile(kPluginsDoc)).size(), AllPlugins().size());
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

// A plugin that only filters, written as docs/architecture.md's worked example writes one: its
// name, its points from its bases, its Entry().
class ThrowawayPlugin : public NamedPlugin<ThrowawayPlugin>, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "recipe-throwaway";
  static PluginEntry Entry() {
    return PluginEntry{.name = kName,
                       .extends = PointsOf<ThrowawayPlugin>(),
                       .enabled = false,
                       .weight = 0,
                       .keys = {},
                       .default_config = nullptr,
                       .make = [](const PluginConfig*, const PodIntent&) {
                         return std::make_unique<ThrowawayPlugin>();
                       }};
  }
  Verdict Filter(const Cycle&, const NodeState&) const override { return Verdict::Pass(); }
};

// docs/architecture.md's "Adding a plugin", followed: the throwaway plugin registered (the
// registry's list and one entry more, as its line in all_plugins.cc makes it), and docs/plugins.md
// with the section the recipe says to add, headed as the recipe writes it for a plugin that
// filters. The registry's checks pass with that step, and fail without it: a recipe that loses the
// step, or heads the section otherwise, fails here.
TEST(PluginRecipe, a_plugin_added_as_the_recipe_says_passes_the_registry_checks) {
  std::string recipe =
      testing::Sections(testing::ReadMarkdown("docs/architecture.md"))["adding-a-plugin"];
  ASSERT_FALSE(recipe.empty());
  // The registry's list, the policy reference's table (docs_policy_test) and the plugins' page,
  // which the checks of a real plugin read: a step names each.
  for (std::string file : {"src/plugins/all_plugins.cc", "docs/policy.md", "docs/plugins.md"}) {
    EXPECT_NE(recipe.find("`" + file + "`"), std::string::npos) << "no step names " << file;
  }
  std::vector<PluginEntry> registry = AllPlugins();
  registry.push_back(ThrowawayPlugin::Entry());
  EXPECT_EQ(EntryProblems(registry.back()), kNone);

  std::string plugins_doc = testing::ReadFile(kPluginsDoc);
  EXPECT_NE(DocumentationProblems(registry, plugins_doc), kNone) << "the docs step is needed";
  std::smatch step;
  ASSERT_TRUE(
      std::regex_search(recipe, step, std::regex("`docs/plugins.md`[^`]*`(## NAME \\(filter\\))`")))
      << "the recipe says nothing of the section a filter's docs/plugins.md gets";
  plugins_doc += "\n" + std::regex_replace(step[1].str(), std::regex("NAME"), "recipe-throwaway") +
                 "\n\nIt refuses nothing.\n";
  EXPECT_EQ(DocumentationProblems(registry, plugins_doc), kNone);
}

}  // namespace
}  // namespace gpusched::plugin_entry_test
