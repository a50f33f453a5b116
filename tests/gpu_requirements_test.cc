#include "gpusched/model/gpu_requirements.h"

#include <gtest/gtest.h>

#include "gpusched/util/text.h"
#include "testing/test_support.h"

namespace gpusched::gpu_requirements_test {
namespace {

PodInfo Annotated(std::vector<std::pair<std::string, std::string>> annotations) {
  PodInfo p = testing::MakePod("p", {});
  p.annotations = std::move(annotations);
  return p;
}

TEST(PodIntent, annotations_set_hard_requirements) {
  PodIntent i =
      ParsePodIntent(Annotated({{"gpusched.io/gpu-product", "NVIDIA-A100-*, NVIDIA-H100-*"},
                                {"gpusched.io/gpu-family", "ampere,hopper"},
                                {"gpusched.io/min-gpu-memory", "40Gi"},
                                {"gpusched.io/min-compute-capability", "8.0"},
                                {"gpusched.io/min-cuda-driver", "535.104"},
                                {"gpusched.io/min-cuda-runtime", "12.2"},
                                {"gpusched.io/sharing", "exclusive"}}),
                     PodIntent{});
  EXPECT_EQ(i.error, "");
  EXPECT_EQ(i.require.products, (std::vector<std::string>{"NVIDIA-A100-*", "NVIDIA-H100-*"}));
  EXPECT_EQ(i.require.families, (std::vector<std::string>{"ampere", "hopper"}));
  EXPECT_EQ(i.require.min_memory_mib, 40960);
  EXPECT_EQ(i.require.min_compute_capability, Version::Parse("8.0"));
  EXPECT_EQ(i.require.min_cuda_driver, Version::Parse("535.104"));
  EXPECT_EQ(i.require.min_cuda_runtime, Version::Parse("12.2"));
  EXPECT_EQ(i.tenancy, GpuTenancy::kExclusive);
  EXPECT_EQ(i.require.criteria(), 6);
}

TEST(PodIntent, annotations_override_profile_defaults_criterion_by_criterion) {
  PodIntent defaults;
  defaults.require.families = {"ampere"};
  defaults.require.min_memory_mib = 1000;
  defaults.tenancy = GpuTenancy::kExclusive;
  PodIntent i = ParsePodIntent(
      Annotated({{"gpusched.io/gpu-family", "hopper"}, {"gpusched.io/sharing", "any"}}), defaults);
  EXPECT_EQ(i.require.families, std::vector<std::string>{"hopper"});
  EXPECT_EQ(i.require.min_memory_mib, 1000);
  EXPECT_EQ(i.tenancy, GpuTenancy::kAny);
}

TEST(PodIntent, unparseable_annotations_name_the_annotation_and_the_form) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected_form;
  };
  const Case cases[] = {
      {"gpusched.io/min-gpu-memory", "lots", "40Gi"},
      {"gpusched.io/min-gpu-memory", "-1Gi", "40Gi"},
      {"gpusched.io/min-compute-capability", "eight", "8.0"},
      {"gpusched.io/min-cuda-driver", "535.x", "535.104"},
      {"gpusched.io/min-cuda-runtime", "", "12.2"},
      {"gpusched.io/gpu-product", " , ", "NVIDIA-A100-*"},
      {"gpusched.io/gpu-family", "", "ampere,hopper"},
      {"gpusched.io/sharing", "sometimes", "exclusive or any"},
  };
  for (const auto& c : cases) {
    PodIntent i = ParsePodIntent(Annotated({{c.key, c.value}}), PodIntent{});
    EXPECT_NE(i.error.find(c.key), std::string::npos) << c.key << ": " << i.error;
    EXPECT_NE(i.error.find(c.expected_form), std::string::npos) << c.key << ": " << i.error;
  }
}

TEST(GlobMatch, star_question_and_case) {
  EXPECT_TRUE(GlobMatch("NVIDIA-A100-*", "NVIDIA-A100-SXM4-40GB"));
  EXPECT_TRUE(GlobMatch("nvidia-a100-*", "NVIDIA-A100-SXM4-40GB"));
  EXPECT_TRUE(GlobMatch("*40GB", "NVIDIA-A100-SXM4-40GB"));
  EXPECT_TRUE(GlobMatch("Tesla-T?", "Tesla-T4"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("NVIDIA-H100-*", "NVIDIA-A100-SXM4-40GB"));
  EXPECT_FALSE(GlobMatch("Tesla-T?", "Tesla-T40"));
  EXPECT_TRUE(GlobMatch("*A100*80GB*", "NVIDIA-A100-SXM4-80GB"));
}

TEST(ParseMemoryMib, quantities_to_mib_rounding_up) {
  EXPECT_EQ(ParseMemoryMib("40Gi"), 40960);
  EXPECT_EQ(ParseMemoryMib("1Mi"), 1);
  EXPECT_EQ(ParseMemoryMib("40G"), 38147);  // 40e9 bytes
  EXPECT_EQ(ParseMemoryMib("0"), std::nullopt);
  EXPECT_EQ(ParseMemoryMib("x"), std::nullopt);
}

}  // namespace
}  // namespace gpusched::gpu_requirements_test
