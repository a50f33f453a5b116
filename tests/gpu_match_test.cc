#include "gpusched/plugins/gpu_match.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::gpu_match_test {
namespace {

using testing::FixtureNode;
using testing::MakePod;
using testing::TestCycle;
using testing::Units;

PodInfo GpuPod(const char* resource = "nvidia.com/gpu") {
  return MakePod("p", {{resource, Units(1)}});
}

struct Case {
  const char* name;
  const char* fixture;
  const char* resource;
  GpuRequirements require;
  VerdictCode code;
  const char* reason;
};

GpuRequirements Products(std::vector<std::string> p) {
  GpuRequirements r;
  r.products = std::move(p);
  return r;
}
GpuRequirements Families(std::vector<std::string> f) {
  GpuRequirements r;
  r.families = std::move(f);
  return r;
}
GpuRequirements Memory(int64_t mib) {
  GpuRequirements r;
  r.min_memory_mib = mib;
  return r;
}
GpuRequirements Driver(const char* v) {
  GpuRequirements r;
  r.min_cuda_driver = Version::Parse(v);
  return r;
}
GpuRequirements Runtime(const char* v) {
  GpuRequirements r;
  r.min_cuda_runtime = Version::Parse(v);
  return r;
}
GpuRequirements Capability(const char* v) {
  GpuRequirements r;
  r.min_compute_capability = Version::Parse(v);
  return r;
}

TEST(GpuMatch, hard_requirements_over_the_node_fixtures) {
  const Case cases[] = {
      {"product_glob_matches", "05-a100-80gb-x8-nomig.json", "nvidia.com/gpu",
       Products({"NVIDIA-A100-*", "NVIDIA-H100-*"}), VerdictCode::kPass, ""},
      {"product_glob_misses", "01-t4-plain-1gpu.json", "nvidia.com/gpu",
       Products({"NVIDIA-A100-*", "NVIDIA-H100-*"}), VerdictCode::kUnresolvable,
       "GPU product does not match NVIDIA-A100-*,NVIDIA-H100-*"},
      {"shared_suffix_is_ignored", "07-l4-x2-mps-4.json", "nvidia.com/gpu", Products({"NVIDIA-L4"}),
       VerdictCode::kPass, ""},
      {"mig_single_product_matches_parent_glob", "06-h100-80gb-x8-mig-single-1g10gb.json",
       "nvidia.com/gpu", Products({"NVIDIA-H100-*"}), VerdictCode::kPass, ""},
      {"family_case_insensitive", "06-h100-80gb-x8-mig-single-1g10gb.json", "nvidia.com/gpu",
       Families({"Hopper"}), VerdictCode::kPass, ""},
      {"family_misses", "03-v100-x4-plain.json", "nvidia.com/gpu", Families({"ampere", "hopper"}),
       VerdictCode::kUnresolvable, "GPU family not in ampere,hopper"},
      {"memory_of_full_gpu", "05-a100-80gb-x8-nomig.json", "nvidia.com/gpu", Memory(80 * 1024),
       VerdictCode::kPass, ""},
      {"memory_of_mig_slice", "04-a100-40gb-x8-mig-mixed.json", "nvidia.com/mig-1g.5gb",
       Memory(8 * 1024), VerdictCode::kUnresolvable, "GPU memory below 8192 MiB"},
      {"memory_of_mig_slice_fits", "04-a100-40gb-x8-mig-mixed.json", "nvidia.com/mig-3g.20gb",
       Memory(16 * 1024), VerdictCode::kPass, ""},
      {"memory_of_mps_replica", "07-l4-x2-mps-4.json", "nvidia.com/gpu", Memory(8 * 1024),
       VerdictCode::kUnresolvable, "GPU memory below 8192 MiB"},  // 23034 / 4 = 5758
      {"memory_of_single_mig_device", "06-h100-80gb-x8-mig-single-1g10gb.json", "nvidia.com/gpu",
       Memory(9984), VerdictCode::kPass, ""},
      {"driver_compared_as_version", "02-t4-timeslice-4-renamed.json", "nvidia.com/gpu.shared",
       Driver("535.54"), VerdictCode::kPass, ""},  // 535.216.01 > 535.54
      {"driver_too_old", "02-t4-timeslice-4-renamed.json", "nvidia.com/gpu.shared",
       Driver("535.216.2"), VerdictCode::kUnresolvable, "CUDA driver older than 535.216.2"},
      {"runtime_ok", "05-a100-80gb-x8-nomig.json", "nvidia.com/gpu", Runtime("12.8"),
       VerdictCode::kPass, ""},
      {"runtime_too_old", "01-t4-plain-1gpu.json", "nvidia.com/gpu", Runtime("12.10"),
       VerdictCode::kUnresolvable, "CUDA runtime older than 12.10"},  // 12.4 < 12.10
      {"capability", "03-v100-x4-plain.json", "nvidia.com/gpu", Capability("8.0"),
       VerdictCode::kUnresolvable, "GPU compute capability below 8.0"},
  };
  for (const auto& c : cases) {
    PodIntent intent;
    intent.require = c.require;
    GpuMatchPlugin plugin({}, intent);
    TestCycle cycle(GpuPod(c.resource), plugin);
    Verdict v = plugin.Filter(*cycle, FixtureNode(c.fixture));
    EXPECT_EQ(v.code, c.code) << c.name << ": " << v.reason;
    EXPECT_EQ(v.reason, c.reason) << c.name;
  }
}

TEST(GpuMatch, driver_version_edge_cases) {
  NodeState node = FixtureNode("04-a100-40gb-x8-mig-mixed.json");  // 550.127.05
  for (auto [min, ok] : {std::pair{"550.127.05", true},
                         {"550.127.5", true},
                         {"550.127.6", false},
                         {"550.54", true},
                         {"550", true},
                         {"551", false},
                         {"550.127.05.1", false}}) {
    PodIntent intent;
    intent.require = Driver(min);
    GpuMatchPlugin plugin({}, intent);
    TestCycle cycle(GpuPod("nvidia.com/mig-1g.5gb"), plugin);
    EXPECT_EQ(plugin.Filter(*cycle, node).passed(), ok) << min;
  }
}

TEST(GpuMatch, missing_labels_cannot_prove_a_requirement) {
  NodeState bare = testing::MakeNode("bare", {{"nvidia.com/gpu", Units(1)}});
  auto filter = [&](GpuRequirements require) {
    PodIntent intent;
    intent.require = std::move(require);
    GpuMatchPlugin plugin({}, intent);
    return plugin.Filter(*TestCycle(GpuPod(), plugin), bare);
  };
  EXPECT_EQ(filter(Products({"*"})).code, VerdictCode::kUnresolvable);
  EXPECT_EQ(filter(Memory(1)).code, VerdictCode::kUnresolvable);
  EXPECT_TRUE(filter({}).passed());
}

TEST(GpuMatch, prepare_applies_annotations_and_rejects_a_malformed_one) {
  PodIntent profile;
  profile.require = Products({"NVIDIA-A100-*"});
  GpuMatchPlugin plugin({}, profile);
  PodInfo h100_only = GpuPod();
  h100_only.annotations.emplace_back("gpusched.io/gpu-product", "NVIDIA-H100-*");
  TestCycle cycle(h100_only, plugin);
  EXPECT_TRUE(cycle->rejection().empty());
  EXPECT_TRUE(
      plugin.Filter(*cycle, FixtureNode("06-h100-80gb-x8-mig-single-1g10gb.json")).passed());
  EXPECT_FALSE(plugin.Filter(*cycle, FixtureNode("05-a100-80gb-x8-nomig.json")).passed());

  PodInfo malformed = GpuPod();
  malformed.annotations.emplace_back("gpusched.io/min-gpu-memory", "lots");
  TestCycle rejected(malformed, plugin);
  EXPECT_NE(rejected->rejection().find("gpusched.io/min-gpu-memory"), std::string::npos);
  EXPECT_NE(rejected->rejection().find("40Gi"), std::string::npos);
}

// Issue #25: a reason quoted a pod's annotation whole, once per rejected node: one request with a
// 200 KB annotation and 5,000 nodes took the process to 967 MiB.
TEST(GpuMatch, reasons_are_one_bounded_printable_line_whatever_the_annotation_holds) {
  GpuMatchPlugin plugin({}, PodIntent{});
  PodInfo pod = GpuPod();
  std::string products = "NVIDIA-B200-\n\x1b[31mforged\r";
  for (int i = 0; i < 60; ++i) products += ",NVIDIA-X" + std::to_string(i) + std::string(100, 'Z');
  pod.annotations.emplace_back("gpusched.io/gpu-product", products);
  TestCycle cycle(pod, plugin);
  ASSERT_TRUE(cycle->rejection().empty());
  Verdict v = plugin.Filter(*cycle, FixtureNode("05-a100-80gb-x8-nomig.json"));
  ASSERT_FALSE(v.passed());
  EXPECT_LE(v.reason.size(), kMaxReasonBytes);
  for (char c : v.reason) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << v.reason;
  // The same reason, stored once, for every node that fails the same way.
  Verdict again = plugin.Filter(*cycle, FixtureNode("05-a100-80gb-x8-nomig.json"));
  EXPECT_EQ(again.reason.data(), v.reason.data());

  // Beyond the list bound the annotation is refused as a whole, with a bounded message.
  PodInfo huge = GpuPod();
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "NVIDIA-\n" + std::to_string(i) + ",";
  huge.annotations.emplace_back("gpusched.io/gpu-product", many);
  TestCycle rejected(huge, plugin);
  EXPECT_NE(rejected->rejection().find("at most 64 items"), std::string::npos)
      << rejected->rejection();
  EXPECT_LE(rejected->rejection().size(), kMaxReasonBytes + 3);
}

TEST(GpuMatch, old_driver_product_names_match_nvidia_globs) {
  EXPECT_TRUE(ProductMatches("NVIDIA-A100-*", "A100-SXM4-40GB"));
  EXPECT_TRUE(ProductMatches("A100-SXM4-40GB", "A100-SXM4-40GB"));
  EXPECT_TRUE(ProductMatches("Tesla-T4", "Tesla-T4-SHARED"));
  EXPECT_FALSE(ProductMatches("NVIDIA-A100-*", "Tesla-T4"));
}

TEST(GpuMatch, preferences_score_the_share_met) {
  PodIntent intent;
  intent.prefer.families = {"hopper"};
  intent.prefer.min_memory_mib = 80 * 1024;
  GpuMatchPlugin plugin({}, intent);
  TestCycle cycle(GpuPod(), plugin);
  EXPECT_TRUE(plugin.ScoresPod(*cycle));
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("05-a100-80gb-x8-nomig.json")), 50);  // memory only
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("03-v100-x4-plain.json")), 0);
  GpuMatchPlugin no_preferences({}, PodIntent{});
  EXPECT_FALSE(no_preferences.ScoresPod(*TestCycle(GpuPod(), no_preferences)));
}

TEST(GpuMatch, cheapest_product_scores_highest) {
  PodIntent intent;
  intent.prefer_cheapest = true;
  GpuMatchPlugin plugin({{"Tesla-T4*", 1}, {"NVIDIA-A100-*", 4}, {"NVIDIA-H100-*", 10}}, intent);
  TestCycle cycle(GpuPod(), plugin);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("01-t4-plain-1gpu.json")), 100);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("05-a100-80gb-x8-nomig.json")), 25);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("06-h100-80gb-x8-mig-single-1g10gb.json")), 10);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode("03-v100-x4-plain.json")), 0);  // not in the table
}

// A 1-GPU pod with `spec` (JSON members of a pod spec beside its containers), as the watch
// decodes it.
PodInfo PinnedPod(const std::string& spec) {
  return testing::PodFromJson(R"({"metadata":{"name":"p"},"spec":{)" + spec +
                              R"(,"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]}})");
}

constexpr const char* kT4 = "01-t4-plain-1gpu.json";
constexpr const char* kA100 = "05-a100-80gb-x8-nomig.json";
constexpr const char* kL4 = "07-l4-x2-mps-4.json";

TEST(GpuMatch, required_node_pins_filter_with_a_bounded_reason) {
  GpuMatchPlugin plugin({}, PodIntent{});
  // Ampere, or any GPU of more than 20 GiB but the A100: the L4 only.
  PodInfo pod =
      PinnedPod(R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
      "nodeSelectorTerms":[
        {"matchExpressions":[{"key":"nvidia.com/gpu.family","operator":"In","values":["hopper"]}]},
        {"matchExpressions":[{"key":"nvidia.com/gpu.memory","operator":"Gt","values":["20480"]},
                             {"key":"nvidia.com/gpu.product","operator":"NotIn",
                              "values":["NVIDIA-A100-SXM4-80GB"]},
                             {"key":"topology.kubernetes.io/zone","operator":"In","values":["a"]}]}]}}})");
  TestCycle cycle(pod, plugin);
  EXPECT_TRUE(plugin.Filter(*cycle, FixtureNode(kL4)).passed());
  for (const char* refused : {kT4, kA100}) {
    Verdict v = plugin.Filter(*cycle, FixtureNode(refused));
    EXPECT_EQ(v.code, VerdictCode::kUnresolvable) << refused;
    EXPECT_EQ(v.reason, "node matches none of the pod's required node affinity terms");
  }
  // nodeSelector: the key it fails on is named, quoted and bounded like every reason subject.
  PodInfo selected = PinnedPod(R"("nodeSelector":{"nvidia.com/gpu.product":"Tesla-T4"})");
  TestCycle selected_cycle(selected, plugin);
  EXPECT_TRUE(plugin.Filter(*selected_cycle, FixtureNode(kT4)).passed());
  Verdict v = plugin.Filter(*selected_cycle, FixtureNode(kA100));
  EXPECT_FALSE(v.passed());
  EXPECT_NE(v.reason.find("nodeSelector"), std::string::npos);
  EXPECT_NE(v.reason.find("nvidia.com/gpu.product"), std::string::npos);
  EXPECT_LE(v.reason.size(), kMaxReasonBytes);
  // No pins: every node passes.
  TestCycle free_cycle(GpuPod(), plugin);
  EXPECT_TRUE(plugin.Filter(*free_cycle, FixtureNode(kA100)).passed());
}

TEST(GpuMatch, preferred_node_affinity_scores_the_share_of_weight_earned) {
  GpuMatchPlugin plugin({}, PodIntent{});
  PodInfo pod =
      PinnedPod(R"("affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
      {"weight":75,"preference":{"matchExpressions":[
        {"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-A100-SXM4-80GB"]}]}},
      {"weight":25,"preference":{"matchExpressions":[
        {"key":"nvidia.com/gpu.memory","operator":"Gt","values":["16000"]}]}}]}})");
  TestCycle cycle(pod, plugin);
  ASSERT_TRUE(plugin.ScoresPod(*cycle));
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode(kA100)), 100);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode(kL4)), 25);
  EXPECT_EQ(plugin.Score(*cycle, FixtureNode(kT4)), 0);
  // Averaged with the other preferences, as one more part.
  PodIntent intent;
  intent.prefer.families = {"ada-lovelace"};
  GpuMatchPlugin with_intent({}, intent);
  TestCycle both(pod, with_intent);
  EXPECT_EQ(with_intent.Score(*both, FixtureNode(kL4)), (100 + 25) / 2.0);
  EXPECT_EQ(with_intent.Score(*both, FixtureNode(kA100)), (0 + 100) / 2.0);
}

}  // namespace
}  // namespace gpusched::gpu_match_test
