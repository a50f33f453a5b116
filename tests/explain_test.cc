#include "gpusched/explain/explain.h"

#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/inventory/static_inventory.h"
#include "gpusched/policy/policy_watcher.h"
#include "testing/test_support.h"

namespace gpusched::explain_test {
namespace {

PodInfo PodFile(const std::string& relative) {
  return LoadPodFile(std::string(GPUSCHED_SOURCE_DIR) + "/" + relative);
}

std::shared_ptr<const Policy> PolicyFile(const std::string& relative) {
  if (relative.empty()) return std::make_shared<const Policy>(DefaultPolicySpec());
  auto p = LoadPolicy(relative);  // relative to the source dir: see the test's chdir
  if (!p.ok()) throw std::runtime_error(p.problems.lines().at(0));
  return p.value;
}

TEST(Explain, ranks_passing_nodes_and_explains_the_rest) {
  auto snapshot = testing::SampleSnapshot();
  Policy policy(DefaultPolicySpec());
  Explanation e = Explain(policy, *snapshot, PodFile("tests/fixtures/pods/llm-2gpu.yaml"));
  EXPECT_EQ(e.pod, "inference/vllm-llama3-70b-0");
  EXPECT_EQ(e.profile, "default");
  ASSERT_EQ(e.nodes.size(), snapshot->size());
  ASSERT_FALSE(e.ranking.empty());
  // fgd against the standard shapes plus consolidate's fixed preference (docs/plugins.md).
  EXPECT_EQ(e.nodes[e.ranking[0]].node, "gpu-node-h100-02");
  for (const auto& n : e.nodes) {
    if (n.node == "gpu-node-t4-01") {
      EXPECT_EQ(n.reason, "GPU product does not match NVIDIA-A100-*,NVIDIA-H100-*");
      EXPECT_EQ(n.evaluation.rejected_by, "gpu-match");
    }
    if (n.node == "gpu-node-h100-03") {
      EXPECT_EQ(n.reason, "Insufficient nvidia.com/gpu");
    }
  }
  auto json = nlohmann::json::parse(FormatExplanationJson(e));
  EXPECT_EQ(json["ranking"][0], "gpu-node-h100-02");
  EXPECT_EQ(json["nodes"].size(), snapshot->size());
}

TEST(Explain, blend_adds_kube_schedulers_scores_and_names_its_pick) {
  // Two 8-GPU nodes that declare cpu and memory; node a is half used, so gpusched ranks it first.
  NodeState a = testing::MakeNode(
      "a", ResourceList{{"nvidia.com/gpu", 8000}, {"cpu", 32000}, {"memory", 1000000}},
      ResourceList{{"nvidia.com/gpu", 4000}});
  NodeState b = testing::MakeNode(
      "b", ResourceList{{"nvidia.com/gpu", 8000}, {"cpu", 32000}, {"memory", 1000000}});
  auto snapshot = testing::SnapshotOf({a, b});
  Policy policy(DefaultPolicySpec());
  PodInfo pod =
      testing::MakePod("p", ResourceList{{"nvidia.com/gpu", 1000}, {"cpu", 16000}, {"memory", 0}});
  Explanation e = Explain(policy, *snapshot, pod, BlendSettings{InTreeScore::kLeastAllocated, 5});
  ASSERT_EQ(e.blended.size(), 2u);
  const BlendedScore& first = e.blended[0];
  EXPECT_EQ(e.nodes[first.node].node, e.nodes[e.ranking[0]].node);
  EXPECT_TRUE(first.resources_known);
  EXPECT_EQ(first.fit, 75);       // LeastAllocated: cpu (32-16)/32 -> 50, memory unused 100
  EXPECT_EQ(first.balanced, 75);  // cpu half used, memory unused: 1 - 0.5/2
  EXPECT_DOUBLE_EQ(first.extender, 10 * 5 * 10);
  EXPECT_DOUBLE_EQ(first.total, first.fit + first.balanced + first.extender);
  EXPECT_NE(FormatExplanationText(e).find("kube-scheduler picks: " + e.nodes[first.node].node),
            std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(FormatExplanationJson(e)).contains("blended"));
}

// explain --pod takes the Pod as kube-scheduler sends it in an extender request: no TypeMeta.
TEST(Explain, a_pod_without_type_meta_explains_like_the_full_object) {
  auto snapshot = testing::SampleSnapshot();
  Policy policy(DefaultPolicySpec());
  PodInfo request_pod = ParsePod(
      R"({"metadata":{"name":"vllm-llama3-70b-0","namespace":"inference","annotations":{
            "gpusched.io/gpu-product":"NVIDIA-A100-*,NVIDIA-H100-*",
            "gpusched.io/min-cuda-runtime":"12.4"}},
          "spec":{"containers":[{"name":"vllm","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})",
      "request.json");
  EXPECT_EQ(FormatExplanationText(Explain(policy, *snapshot, request_pod)),
            FormatExplanationText(
                Explain(policy, *snapshot, PodFile("tests/fixtures/pods/llm-2gpu.yaml"))));
}

// docs/plugins.md shows explain output between markers naming the command's arguments:
//   <!-- explain --pod P [--policy F] -->  ```text ... ```
// Each block must be exactly what explain prints today.
TEST(Explain, output_shown_in_docs_is_current) {
  ASSERT_EQ(::chdir(GPUSCHED_SOURCE_DIR), 0);
  std::string doc = testing::ReadFile("docs/plugins.md");
  std::regex block(R"(<!-- explain --pod (\S+)(?: --policy (\S+))? -->\n```text\n([\s\S]*?)```)");
  auto snapshot = testing::SampleSnapshot();
  int blocks = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), block); it != std::sregex_iterator();
       ++it) {
    ++blocks;
    std::string pod = (*it)[1], policy = (*it)[2], shown = (*it)[3];
    Explanation e = Explain(*PolicyFile(policy), *snapshot, PodFile(pod));
    EXPECT_EQ(FormatExplanationText(e), shown) << "docs/plugins.md block for " << pod;
  }
  EXPECT_GE(blocks, 2);
}

}  // namespace
}  // namespace gpusched::explain_test
