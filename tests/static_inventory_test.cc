#include "gpusched/inventory/static_inventory.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched {
namespace {

TEST(StaticInventory, sample_cluster_has_the_documented_mix) {
  Inventory inv = ParseInventory(kSampleClusterYaml, "sample");
  EXPECT_EQ(inv.nodes.size(), 13u);
  EXPECT_GE(inv.pods.size(), 10u);
  std::set<std::string> products;
  for (const auto& n : inv.nodes) products.insert(n.gpu.product);
  for (const char* p : {"Tesla-T4", "Tesla-T4-SHARED", "NVIDIA-A100-SXM4-40GB",
                        "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-V100-SXM2-16GB"}) {
    EXPECT_TRUE(products.count(p)) << p;
  }
}

TEST(StaticInventory, sample_cluster_usage_matches_its_header) {
  auto snap = testing::SampleSnapshot();
  auto used = [&](const char* node, const char* r) { return snap->Find(node)->used.units(r); };
  EXPECT_EQ(used("gpu-node-t4-01", "nvidia.com/gpu.shared"), 2);
  EXPECT_EQ(used("gpu-node-a100-mig-01", "nvidia.com/mig-1g.5gb"), 5);
  EXPECT_EQ(used("gpu-node-a100-07", "nvidia.com/gpu"), 6);
  EXPECT_EQ(used("gpu-node-h100-03", "nvidia.com/gpu"), 7);  // the Succeeded pod holds nothing
  EXPECT_EQ(used("gpu-node-v100-02", "nvidia.com/gpu"), 4);
  EXPECT_EQ(used("gpu-node-a100-80g-02", "nvidia.com/gpu"), 0);
}

TEST(StaticInventory, reads_json_lists_typed_lists_and_yaml_streams) {
  Inventory json_list = ParseInventory(
      R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"}},
          {"kind":"Pod","metadata":{"name":"p1"}},{"kind":"ConfigMap"}]})",
      "t");
  EXPECT_EQ(json_list.nodes.size(), 1u);
  EXPECT_EQ(json_list.pods.size(), 1u);
  EXPECT_EQ(json_list.skipped_objects, 1u);

  Inventory typed = ParseInventory(
      R"({"kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})", "t");
  EXPECT_EQ(typed.nodes.size(), 2u);

  Inventory yaml = ParseInventory(
      "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {nvidia.com/gpu: 4}}\n---\n"
      "kind: PodList\nitems:\n- metadata: {name: p1}\n  spec: {nodeName: n1}\n",
      "t");
  ASSERT_EQ(yaml.nodes.size(), 1u);
  EXPECT_EQ(yaml.nodes[0].allocatable.units("nvidia.com/gpu"), 4);  // unquoted number works
  EXPECT_EQ(yaml.pods.size(), 1u);
}

TEST(StaticInventory, errors_name_the_source_and_the_place) {
  try {
    ParseInventory(
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n"
        "  status: {allocatable: {nvidia.com/gpu: many}}\n",
        "cluster.yaml");
    FAIL();
  } catch (const InventoryError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cluster.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("items[0]"), std::string::npos) << m;
    EXPECT_NE(m.find("nvidia.com/gpu"), std::string::npos) << m;
  }
  EXPECT_THROW(ParseInventory("a: [", "x.yaml"), InventoryError);
  EXPECT_THROW(ParseInventory("{\"kind\":", "x.json"), InventoryError);
  EXPECT_THROW(LoadInventoryFile("/nonexistent/cluster.yaml"), InventoryError);
}

}  // namespace
}  // namespace gpusched
