#include "gpusched/policy/policy_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_watcher.h"
#include "testing/test_support.h"

namespace gpusched::policy_file_test {
namespace {

constexpr char kHeader[] = "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n";

// A plugin's settings as it prints them, flattened: "costs.NVIDIA-T4" -> "0.5",
// "targetWorkload.expected[1].gpus" -> "1".
class FlatSink : public SettingsSink {
 public:
  void Number(std::string_view key, double value) override { Put(key, Format(value)); }
  void Bool(std::string_view key, bool value) override { Put(key, value ? "true" : "false"); }
  void String(std::string_view key, std::string_view value) override { Put(key, value); }
  void NumberMap(std::string_view key, const NamedNumbers& values) override {
    BeginMap(key);
    for (const auto& [name, value] : values) Number(name, value);
    End();
  }
  void Strings(std::string_view key, const std::vector<std::string>& values) override {
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    Put(key, joined);
  }
  void BeginMap(std::string_view key) override {
    // An empty key is the next entry of a list.
    path_.push_back(key.empty() ? std::to_string(entries_.back()++) : std::string(key));
    entries_.push_back(-1);
  }
  void BeginList(std::string_view key) override {
    path_.push_back(std::string(key));
    entries_.push_back(0);
  }
  void End() override {
    path_.pop_back();
    entries_.pop_back();
  }

  std::map<std::string, std::string> values;
  std::vector<std::string> keys;  // in the order printed

 private:
  static std::string Format(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }
  void Put(std::string_view key, std::string_view value) {
    std::string path;
    for (size_t i = 0; i < path_.size(); ++i) {
      bool entry = i > 0 && entries_[i - 1] >= 0;
      path += entry ? "[" + path_[i] + "]" : (path.empty() ? "" : ".") + path_[i];
    }
    bool entry = !entries_.empty() && entries_.back() >= 0;
    path += entry ? "[" + std::string(key) + "]" : (path.empty() ? "" : ".") + std::string(key);
    values[path] = std::string(value);
    keys.push_back(path);
  }
  std::vector<std::string> path_;
  std::vector<int> entries_;  // per level: the next list entry, or -1 in a mapping
};

// The settings of `plugin` in profile `profile` of `spec`, flattened.
FlatSink SettingsOf(const PolicySpec& spec, size_t profile, const std::string& plugin) {
  FlatSink sink;
  const PluginSetting& setting = spec.profiles.at(profile).plugins.at(plugin);
  if (setting.config) setting.config->Print(sink);
  return sink;
}

TEST(PolicyFile, every_example_policy_loads_and_compiles) {
  for (const char* name : {"default", "training-binpack", "inference-latency", "mig-mixed"}) {
    std::string path = std::string(GPUSCHED_SOURCE_DIR) + "/policies/" + name + ".yaml";
    Validated<std::shared_ptr<const Policy>> policy = LoadPolicy(path);
    ASSERT_TRUE(policy.ok()) << policy.problems.lines()[0];
    EXPECT_FALSE(policy.value->spec().profiles.empty()) << name;
    // The effective policy printed by `policy check` reads back to the same policy.
    std::string printed = FormatPolicy(policy.value->spec());
    Validated<PolicySpec> again = ParsePolicy(printed, "printed");
    ASSERT_TRUE(again.ok()) << printed << again.problems.lines()[0];
    EXPECT_EQ(FormatPolicy(again.value), printed) << name;
  }
}

// Keys the author chose (cost globs, matchLabels, resourceWeights) that YAML writes escaped, or
// that are not UTF-8, read back after FormatPolicy and print the same again, whatever their length:
// yaml-cpp's emitter writes a key under 1024 bytes as an implicit key, which its reader takes only
// up to 1024 bytes as written (a NUL byte is written as four, "\x00"), and it prints a byte that is
// not UTF-8 as U+FFFD (three). Found by the policy fuzz target
// (tests/fuzz/regressions/policy/cost_key_*.yaml).
TEST(PolicyFile, long_keys_written_escaped_read_back_after_formatting) {
  // "\xff" is a byte that is not UTF-8, printed as U+FFFD (three bytes).
  for (const char* unit : {"\\0", "\\x11", "\\\"", "\\\\", "\\n", "a", "\xff", "\\0\xff"}) {
    for (int n : {1, 200, 248, 249, 250, 256, 300, 330, 340, 400, 1100}) {
      std::string key = "\"x/";
      for (int i = 0; i < n; ++i) key += unit;
      key += "\"";
      std::string text = std::string(kHeader) + "costs:\n  ? " + key +
                         "\n  : 3\nprofiles:\n- name: p\n  selector:\n    matchLabels:\n      ? " +
                         key +
                         "\n      : v\n  plugins:\n    gpu-binpack:\n      resourceWeights:\n" +
                         "        ? " + key + "\n        : 2\n";
      std::string what = std::string(unit) + " x " + std::to_string(n);
      Validated<PolicySpec> r = ParsePolicy(text, "p.yaml");
      ASSERT_TRUE(r.ok()) << what << ": " << r.problems.lines()[0];
      ASSERT_EQ(SettingsOf(r.value, 0, "gpu-match").keys.size(), 1u) << what;
      std::string printed = FormatPolicy(r.value);
      Validated<PolicySpec> again = ParsePolicy(printed, "printed");
      ASSERT_TRUE(again.ok()) << what << ": " << again.problems.lines()[0];
      EXPECT_EQ(FormatPolicy(again.value), printed) << what;
      ASSERT_EQ(again.value.profiles.size(), 2u) << what;
      if (std::string_view(unit).find('\xff') != std::string_view::npos) continue;
      // The same keys (a byte that is not UTF-8 is printed as U+FFFD, so not those).
      EXPECT_EQ(SettingsOf(again.value, 1, "gpu-match").values,
                SettingsOf(r.value, 1, "gpu-match").values)
          << what;
      EXPECT_EQ(again.value.profiles[1].match_labels, r.value.profiles[1].match_labels) << what;
    }
  }
}

TEST(PolicyFile, default_example_equals_the_built_in_default) {
  auto policy = LoadPolicy(std::string(GPUSCHED_SOURCE_DIR) + "/policies/default.yaml");
  ASSERT_TRUE(policy.ok()) << policy.problems.lines()[0];
  EXPECT_EQ(FormatPolicy(policy.value->spec()), FormatPolicy(DefaultPolicySpec()));
}

TEST(PolicyFile, profiles_inherit_and_override_the_base_plugins) {
  auto r = ParsePolicy(std::string(kHeader) +
                           "plugins:\n  gpu-binpack: {weight: 2}\n"
                           "profiles:\n- name: training\n  plugins:\n    gpu-binpack: {weight: 5}\n"
                           "    mig-fit: {enabled: false}\n",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << r.problems.lines()[0];
  ASSERT_EQ(r.value.profiles.size(), 2u);  // the implicit default comes first
  EXPECT_EQ(r.value.profiles[0].name, "default");
  EXPECT_EQ(r.value.profiles[0].plugins.at("gpu-binpack").weight, 2);
  EXPECT_EQ(r.value.profiles[1].plugins.at("gpu-binpack").weight, 5);
  EXPECT_FALSE(r.value.profiles[1].plugins.at("mig-fit").enabled);
  EXPECT_TRUE(r.value.profiles[0].plugins.at("mig-fit").enabled);
}

TEST(PolicyFile, naming_a_plugin_turns_it_on_and_top_level_switches_parse) {
  auto r =
      ParsePolicy(std::string(kHeader) +
                      "filterBestOnly: true\nplugins:\n  best-fit:\n  gpu-binpack: {weight: 2}\n"
                      "  fgd: {enabled: false}\nprofiles:\n- name: default\n  gpuPodsOnly: false\n",
                  "p.yaml");
  ASSERT_TRUE(r.ok()) << r.problems.lines()[0];
  const auto& plugins = r.value.profiles[0].plugins;
  EXPECT_TRUE(plugins.at("best-fit").enabled);  // off by default, named: on
  EXPECT_TRUE(plugins.at("gpu-binpack").enabled);
  EXPECT_FALSE(plugins.at("fgd").enabled);  // on by default, explicitly off
  EXPECT_FALSE(plugins.at("dot-product").enabled);
  EXPECT_TRUE(r.value.filter_best_only);
  EXPECT_FALSE(r.value.profiles[0].gpu_pods_only);
  EXPECT_NE(FormatPolicy(r.value).find("filterBestOnly: true"), std::string::npos);
}

struct BadCase {
  const char* name;
  std::string yaml;
  const char* expected;  // a substring of the first error
};

TEST(PolicyFile, bad_files_name_file_line_and_key) {
  const std::string h = kHeader;
  const BadCase cases[] = {
      {"unknown_top_key", h + "colour: blue\n", "bad.yaml:3:1: colour: unknown key"},
      {"wrong_api_version", "apiVersion: v1\nkind: SchedulingPolicy\n",
       "bad.yaml:1:13: apiVersion: must be gpusched.io/v1alpha1, got v1"},
      {"missing_kind", "apiVersion: gpusched.io/v1alpha1\n", "kind: is required"},
      {"plugins_not_a_map", h + "plugins: [gpu-fit]\n",
       "bad.yaml:3:10: plugins: must be a mapping"},
      {"weight_out_of_range", h + "plugins:\n  gpu-binpack: {weight: 101}\n",
       "bad.yaml:4:25: plugins.gpu-binpack.weight: must be within 0..100, got 101"},
      {"negative_weight", h + "plugins:\n  gpu-binpack: {weight: -1}\n",
       "plugins.gpu-binpack.weight: must be within 0..100"},
      {"weight_not_a_number", h + "plugins:\n  gpu-binpack: {weight: heavy}\n",
       "plugins.gpu-binpack.weight: must be a number"},
      {"unknown_plugin", h + "plugins:\n  gpu-binpak: {}\n",
       "bad.yaml:4:3: plugins.gpu-binpak: unknown plugin"},
      {"unknown_plugin_key", h + "plugins:\n  mig-fit: {weigth: 1}\n",
       "bad.yaml:4:13: plugins.mig-fit.weigth: unknown key (allowed: enabled, weight)"},
      {"bad_bool", h + "plugins:\n  gpu-fit: {enabled: yes please}\n",
       "plugins.gpu-fit.enabled: must be true or false"},
      {"duplicate_profiles", h + "profiles:\n- name: a\n- name: a\n",
       "bad.yaml:5:9: profiles[1].name: duplicate profile \"a\""},
      {"profile_without_name", h + "profiles:\n- sharing: any\n", "profiles[0].name: is required"},
      {"bad_quantity", h + "profiles:\n- name: a\n  require: {minGpuMemory: lots}\n",
       "profiles[0].require.minGpuMemory: must be a quantity such as 40Gi"},
      {"bad_version", h + "profiles:\n- name: a\n  require: {minCudaDriver: latest}\n",
       "profiles[0].require.minCudaDriver: must be a version"},
      {"bad_sharing", h + "profiles:\n- name: a\n  sharing: sometimes\n",
       "profiles[0].sharing: must be exclusive or any"},
      {"cheapest_only_in_prefer", h + "profiles:\n- name: a\n  require: {cheapest: true}\n",
       "profiles[0].require.cheapest: unknown key"},
      {"default_profile_missing", h + "defaultProfile: nope\n",
       "defaultProfile: names no profile in profiles"},
      {"bad_action", h + "plugins:\n  maintenance: {action: ignore}\n",
       "plugins.maintenance.action: must be filter or score"},
      {"costs_negative", h + "costs:\n  \"Tesla-T4*\": -1\n", "costs.Tesla-T4*: must be within"},
      {"yaml_syntax", h + "plugins: {gpu-fit: [\n", "bad.yaml:"},
      {"empty_file", "", "bad.yaml: empty policy file"},
      {"bad_filter_best_only", h + "filterBestOnly: maybe\n",
       "filterBestOnly: must be true or false"},
      {"bad_gpu_pods_only", h + "profiles:\n- name: a\n  gpuPodsOnly: 1x\n",
       "profiles[0].gpuPodsOnly: must be true or false"},
      {"prior_share_out_of_range", h + "targetWorkload: {priorShare: 1.5}\n",
       "bad.yaml:3:30: targetWorkload.priorShare: must be within 0..1"},
      {"prior_pods_negative", h + "targetWorkload: {priorPods: -1}\n",
       "bad.yaml:3:29: targetWorkload.priorPods: must be within 0..1000000"},
      {"expected_fractional_gpus", h + "targetWorkload: {expected: [{gpus: 1.5, weight: 1}]}\n",
       "targetWorkload.expected[0].gpus: must be a whole number"},
      {"expected_all_zero", h + "targetWorkload: {expected: [{gpus: 8, weight: 0}]}\n",
       "targetWorkload.expected: weights must not all be 0"},
      {"expected_unknown_key", h + "targetWorkload: {expected: [{gpu: 8, weight: 1}]}\n",
       "targetWorkload.expected[0].gpu: unknown key (allowed: gpus, mig, weight)"},
      {"expected_gpus_and_mig",
       h + "targetWorkload: {expected: [{gpus: 1, mig: 1g.10gb, weight: 1}]}\n",
       "targetWorkload.expected[0]: needs weight and one of gpus or mig"},
      {"expected_not_a_profile", h + "targetWorkload: {expected: [{mig: large, weight: 1}]}\n",
       "targetWorkload.expected[0].mig: must be a MIG profile such as 1g.10gb"},
      {"expected_not_a_list", h + "targetWorkload: {expected: {gpus: 8}}\n",
       "bad.yaml:3:28: targetWorkload.expected: must be a non-empty list of at most 32"},
      {"prior_share_in_plugins", h + "plugins:\n  fgd: {targetWorkload: {priorShare: 2}}\n",
       "bad.yaml:4:38: plugins.fgd.targetWorkload.priorShare: must be within 0..1"},
      {"sharing_not_a_bool", h + "sharing: {mpsFailRequestsGreaterThanOne: maybe}\n",
       "bad.yaml:3:42: sharing.mpsFailRequestsGreaterThanOne: must be true or false"},
      {"sharing_unknown_key", h + "sharing: {mps: true}\n",
       "bad.yaml:3:11: sharing.mps: unknown key (allowed: mpsFailRequestsGreaterThanOne, "
       "timeSlicingFailRequestsGreaterThanOne)"},
      {"weight_on_a_filter", h + "plugins:\n  sharing: {weight: 1}\n",
       "plugins.sharing.weight: must be 0: sharing filters and does not score"},
  };
  for (const auto& c : cases) {
    Validated<PolicySpec> r = ParsePolicy(c.yaml, "bad.yaml");
    EXPECT_FALSE(r.ok()) << c.name;
    ASSERT_FALSE(r.problems.empty()) << c.name;
    EXPECT_NE(r.problems.lines()[0].find(c.expected), std::string::npos)
        << c.name << ": got \"" << r.problems.lines()[0] << "\"";
  }
}

TEST(PolicyFile, target_workload_and_rank_mapping_are_read_and_printed) {
  auto r = ParsePolicy(std::string(kHeader) +
                           "scoreMapping: rank\n"
                           "targetWorkload:\n  priorShare: 0.25\n  priorPods: 4\n"
                           "  expected: [{gpus: 8, weight: 1}, {gpus: 1, weight: 3},"
                           " {mig: 1g.10gb, weight: 4}]\n",
                       "ok.yaml");
  ASSERT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems.lines()[0]);
  EXPECT_EQ(r.value.score_mapping, ScoreMapping::kRank);
  // fgd's setting; in shape order: the slice (no GPU device) first, then 1 and 8 GPUs.
  const std::map<std::string, std::string> expected = {
      {"targetWorkload.priorShare", "0.25"},         {"targetWorkload.priorPods", "4"},
      {"targetWorkload.expected[0].mig", "1g.10gb"}, {"targetWorkload.expected[0].weight", "0.5"},
      {"targetWorkload.expected[1].gpus", "1"},      {"targetWorkload.expected[1].weight", "0.375"},
      {"targetWorkload.expected[2].gpus", "8"},      {"targetWorkload.expected[2].weight", "0.125"},
  };
  EXPECT_EQ(SettingsOf(r.value, 0, "fgd").values, expected);
  std::string printed = FormatPolicy(r.value);
  EXPECT_NE(printed.find("scoreMapping: rank"), std::string::npos) << printed;
  EXPECT_NE(printed.find("priorShare: 0.25"), std::string::npos) << printed;
  auto again = ParsePolicy(printed, "printed.yaml");  // what `policy check` prints reads back
  ASSERT_TRUE(again.ok()) << (again.problems.empty() ? "" : again.problems.lines()[0]);
  EXPECT_EQ(SettingsOf(again.value, 0, "fgd").values, expected);
}

// costs, sharing and targetWorkload are settings of gpu-match, sharing and fgd. Stated at the top
// level, as policies did before, they mean the same as in the `plugins:` mapping: every profile
// starts from them, a profile may override them, and they turn no plugin on or off.
TEST(PolicyFile, top_level_costs_sharing_and_target_workload_are_plugin_settings) {
  const std::string top_level =
      std::string(kHeader) +
      "costs: {\"NVIDIA-H100-*\": 4, \"NVIDIA-A100-*\": 2, \"*\": 1}\n"
      "sharing: {timeSlicingFailRequestsGreaterThanOne: true}\n"
      "targetWorkload: {priorPods: 0, expected: [{gpus: 8, weight: 1}]}\n";
  const std::string in_plugins =
      std::string(kHeader) +
      "plugins:\n"
      "  gpu-match: {costs: {\"NVIDIA-H100-*\": 4, \"NVIDIA-A100-*\": 2, \"*\": 1}}\n"
      "  sharing: {timeSlicingFailRequestsGreaterThanOne: true}\n"
      "  fgd: {targetWorkload: {priorPods: 0, expected: [{gpus: 8, weight: 1}]}}\n";
  auto a = ParsePolicy(top_level + "profiles:\n- name: default\n- name: other\n", "a.yaml");
  auto b = ParsePolicy(in_plugins + "profiles:\n- name: default\n- name: other\n", "b.yaml");
  ASSERT_TRUE(a.ok()) << a.problems.lines()[0];
  ASSERT_TRUE(b.ok()) << b.problems.lines()[0];
  EXPECT_EQ(FormatPolicy(a.value), FormatPolicy(b.value));
  for (size_t profile : {0u, 1u}) {
    FlatSink costs = SettingsOf(a.value, profile, "gpu-match");
    // In the order written: the first glob that matches a product gives its cost.
    EXPECT_EQ(costs.keys,
              (std::vector<std::string>{"costs.NVIDIA-H100-*", "costs.NVIDIA-A100-*", "costs.*"}));
    EXPECT_EQ(
        SettingsOf(a.value, profile, "sharing").values,
        (std::map<std::string, std::string>{{"mpsFailRequestsGreaterThanOne", "true"},
                                            {"timeSlicingFailRequestsGreaterThanOne", "true"}}));
    EXPECT_EQ(SettingsOf(a.value, profile, "fgd").values.at("targetWorkload.priorPods"), "0");
  }

  // A profile's own mapping overrides them; the top level turns nothing on.
  auto c = ParsePolicy(top_level +
                           "plugins: {gpu-match: {enabled: false}}\n"
                           "profiles:\n- name: default\n  plugins:\n"
                           "    gpu-match: {costs: {\"NVIDIA-T4\": 1}}\n"
                           "    sharing: {mpsFailRequestsGreaterThanOne: false}\n",
                       "c.yaml");
  ASSERT_TRUE(c.ok()) << c.problems.lines()[0];
  EXPECT_EQ(SettingsOf(c.value, 0, "gpu-match").keys, std::vector<std::string>{"costs.NVIDIA-T4"});
  EXPECT_EQ(SettingsOf(c.value, 0, "sharing").values.at("mpsFailRequestsGreaterThanOne"), "false");
  EXPECT_EQ(SettingsOf(c.value, 0, "sharing").values.at("timeSlicingFailRequestsGreaterThanOne"),
            "true");
  EXPECT_TRUE(c.value.profiles[0].plugins.at("gpu-match").enabled);  // the profile named it
  auto off = ParsePolicy(top_level + "plugins: {gpu-match: {enabled: false}}\n", "off.yaml");
  ASSERT_TRUE(off.ok()) << off.problems.lines()[0];
  EXPECT_FALSE(off.value.profiles[0].plugins.at("gpu-match").enabled);
}

// A weight belongs to a plugin that scores. gpu-fit and sharing only filter: a weight there would
// only pull every node's weighted mean down (issue #28), so a policy that gives one is refused
// with file, line and key; 0, what it meant before, is still read.
TEST(PolicyFile, a_weight_on_a_plugin_that_does_not_score_is_refused) {
  auto r = ParsePolicy(std::string(kHeader) +
                           "scoreMapping: linear\n"
                           "plugins:\n  gpu-fit: {weight: 50}\n  sharing: {weight: 50}\n"
                           "profiles:\n- name: default\n  plugins:\n    gpu-fit: {weight: 1}\n",
                       "bad.yaml");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.problems.lines(),
            (std::vector<std::string>{
                "bad.yaml:5:21: plugins.gpu-fit.weight: must be 0: gpu-fit filters and does not "
                "score",
                "bad.yaml:6:21: plugins.sharing.weight: must be 0: sharing filters and does not "
                "score",
                "bad.yaml:10:23: profiles[0].plugins.gpu-fit.weight: must be 0: gpu-fit filters "
                "and does not score",
            }));
  auto zero = ParsePolicy(std::string(kHeader) +
                              "plugins:\n  gpu-fit: {enabled: true, weight: 0}\n"
                              "  maintenance: {action: score, weight: 2}\n",
                          "ok.yaml");
  ASSERT_TRUE(zero.ok()) << zero.problems.lines()[0];
  EXPECT_EQ(zero.value.profiles[0].plugins.at("maintenance").weight, 2);  // filters and scores
  // What `policy check` prints gives no weight to a plugin that does not score.
  std::string printed = FormatPolicy(zero.value);
  auto fit = printed.find("gpu-fit:");
  ASSERT_NE(fit, std::string::npos);
  EXPECT_EQ(printed.substr(fit, printed.find("gpu-binpack:") - fit).find("weight"),
            std::string::npos)
      << printed;
}

// A plugin's own settings are read and printed by the plugin (plugins/plugin_entry.h): a profile
// starts from a copy of the base settings, and changing it leaves the base as it was.
TEST(PolicyFile, plugin_settings_are_copied_into_profiles_and_printed_back) {
  auto r = ParsePolicy(std::string(kHeader) +
                           "plugins:\n  gpu-binpack: {resourceWeights: {nvidia.com/gpu: 2}}\n"
                           "  maintenance: {action: score}\n"
                           "profiles:\n- name: training\n  plugins:\n"
                           "    gpu-binpack: {defaultResourceWeight: 3}\n",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << r.problems.lines()[0];
  std::string printed = FormatPolicy(r.value);
  auto first = printed.find("gpu-binpack:");
  auto second = printed.find("gpu-binpack:", first + 1);
  ASSERT_NE(second, std::string::npos) << printed;
  std::string base = printed.substr(first, second - first);
  std::string training = printed.substr(second);
  EXPECT_NE(base.find("nvidia.com/gpu: 2"), std::string::npos) << base;
  EXPECT_NE(base.find("defaultResourceWeight: 1"), std::string::npos) << base;
  EXPECT_NE(training.find("nvidia.com/gpu: 2"), std::string::npos) << training;
  EXPECT_NE(training.find("defaultResourceWeight: 3"), std::string::npos) << training;
  EXPECT_EQ(printed.find("action: filter"), std::string::npos) << printed;  // score, inherited
  auto again = ParsePolicy(printed, "printed.yaml");
  ASSERT_TRUE(again.ok()) << again.problems.lines()[0];
  EXPECT_EQ(FormatPolicy(again.value), printed);
  // A plugin's own keys are checked by the plugin's entry: maintenance has no resourceWeights.
  auto bad = ParsePolicy(std::string(kHeader) + "plugins:\n  maintenance: {resourceWeights: {}}\n",
                         "bad.yaml");
  ASSERT_FALSE(bad.problems.empty());
  EXPECT_NE(bad.problems.lines()[0].find("unknown key (allowed: enabled, weight, action)"),
            std::string::npos)
      << bad.problems.lines()[0];
}

TEST(PolicyFile, all_errors_are_reported_not_just_the_first) {
  auto r = ParsePolicy(std::string(kHeader) + "a: 1\nb: 2\nscoreMapping: fancy\n", "bad.yaml");
  EXPECT_EQ(r.problems.lines().size(), 3u);
}

// What `policy check` prints: LoadPolicy hands on every problem of the file, in file order, each
// naming the file, and no policy.
TEST(LoadPolicy, gives_every_error_of_a_file) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gpusched-policy-errors-" + std::to_string(::getpid()) + ".yaml"))
                         .string();
  std::ofstream(path) << kHeader << "a: 1\nb: 2\nscoreMapping: fancy\n";
  auto policy = LoadPolicy(path);
  std::filesystem::remove(path);
  EXPECT_FALSE(policy.ok());
  EXPECT_EQ(policy.value, nullptr);
  const std::vector<std::string>& lines = policy.problems.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind(path + ":3:1: a: unknown key (allowed: ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind(path + ":4:1: b: unknown key (allowed: ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2], path + ":5:15: scoreMapping: must be rank, linear or minmax");
}

TEST(PolicyFile, digest_changes_with_content) {
  EXPECT_EQ(PolicyDigest("a"), PolicyDigest("a"));
  EXPECT_NE(PolicyDigest("a"), PolicyDigest("b"));
  EXPECT_EQ(PolicyDigest("a").size(), 16u);
}

TEST(Policy, selects_by_annotation_then_selector_then_default) {
  auto r = ParsePolicy(std::string(kHeader) +
                           "profiles:\n"
                           "- name: default\n"
                           "- name: training\n  selector: {namespaces: [train]}\n"
                           "- name: labelled\n  selector: {matchLabels: {tier: gold}}\n",
                       "p.yaml");
  ASSERT_TRUE(r.ok());
  Policy policy(r.value);
  PodInfo pod = testing::MakePod("p", {});
  EXPECT_EQ(policy.Select(pod).profile, "default");
  pod.namespace_name = "train";
  EXPECT_EQ(policy.Select(pod).profile, "training");
  pod.namespace_name = "other";
  pod.labels = {{"tier", "gold"}};
  EXPECT_EQ(policy.Select(pod).profile, "labelled");
  pod.annotations = {{"gpusched.io/profile", "training"}};
  EXPECT_EQ(policy.Select(pod).profile, "training");
  pod.annotations = {{"gpusched.io/profile", "nope"}};
  auto s = policy.Select(pod);
  EXPECT_EQ(s.profile, "default");
  EXPECT_NE(s.error.find("unknown profile \"nope\""), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("default, training, labelled"), std::string::npos) << s.error;
}

TEST(PolicyFile, a_directory_is_refused_as_such) {
  std::string dir = std::filesystem::temp_directory_path().string();
  auto policy = LoadPolicy(dir);  // what policy check and serve --policy use
  EXPECT_FALSE(policy.ok());
  EXPECT_EQ(policy.problems.lines(), std::vector<std::string>{dir + " is a directory"});
}

TEST(PolicyFile, errors_quote_input_bytes_escaped) {
  auto r = ParsePolicy(std::string(kHeader) + "x\x01\x7f: 1\n", "p.yaml");
  ASSERT_EQ(r.problems.lines().size(), 1u);
  EXPECT_EQ(r.problems.lines()[0].rfind("p.yaml:3:1: x\\x01\\x7f: unknown key", 0), 0u)
      << r.problems.lines()[0];
  auto bad_escape = ParsePolicy("a: \"\\\x01\"\n", "p.yaml");
  ASSERT_EQ(bad_escape.problems.lines().size(), 1u);
  EXPECT_NE(bad_escape.problems.lines()[0].find(": unknown escape character: \\x01"),
            std::string::npos)
      << bad_escape.problems.lines()[0];
}

TEST(PolicyFile, aliases_cannot_multiply_the_errors) {
  // Each alias repeats 50 unknown keys; the report stops at 100 errors.
  std::string yaml = std::string(kHeader) + "plugins: &p {";
  for (int i = 0; i < 50; ++i)
    yaml += (i ? ", " : "") + std::string("k") + std::to_string(i) + ": 1";
  yaml += "}\nprofiles:\n";
  for (int i = 0; i < 1000; ++i) yaml += "- {name: n" + std::to_string(i) + ", plugins: *p}\n";
  auto r = ParsePolicy(yaml, "p.yaml");
  ASSERT_EQ(r.problems.lines().size(), 101u);
  EXPECT_EQ(r.problems.lines().back(), "p.yaml: more than 100 errors; the rest are not shown");
}

}  // namespace
}  // namespace gpusched::policy_file_test
