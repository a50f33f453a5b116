#include "gpusched/inventory/static_inventory.h"
#include "gpusched/util/file_text.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::static_inventory_test {
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
  EXPECT_THROW(LoadInventoryFile("/nonexistent/cluster.yaml"), FileError);
}

// The message of the InputError `parse` throws (an InventoryError, or a FileError for a file it
// cannot read), or "no error".
template <class F>
std::string Error(F parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StaticInventory, skips_objects_of_other_kinds_at_the_top_level_too) {
  Inventory yaml = ParseInventory("kind: Service\nmetadata: {name: s}\n---\nkind: Node\n", "t");
  EXPECT_EQ(yaml.nodes.size(), 1u);
  EXPECT_EQ(yaml.skipped_objects, 1u);
  Inventory json = ParseInventory(R"({"kind":"ConfigMap","data":{"a":"b"}})", "t");
  EXPECT_EQ(json.skipped_objects, 1u);
}

TEST(StaticInventory, errors_quote_input_bytes_escaped) {
  std::string m = Error([] {
    ParseInventory("kind: Node\nstatus: {allocatable: {nvidia.com/gpu: \"\\x01\\n\"}}\n", "c.yaml");
  });
  EXPECT_NE(m.find("invalid quantity \"\\x01\\x0a\""), std::string::npos) << m;
}

TEST(StaticInventory, a_directory_is_refused) {
  std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(Error([&] { LoadInventoryFile(dir); }), dir + " is a directory");
}

// The Pod of an extender request carries no apiVersion or kind; explain --pod takes it as is.
TEST(ParsePod, takes_a_pod_without_type_meta_in_json_or_yaml) {
  PodInfo json = ParsePod(
      R"({"metadata":{"name":"p","namespace":"ns"},
          "spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})",
      "pod.json");
  EXPECT_EQ(json.name, "p");
  EXPECT_EQ(json.requests.units("nvidia.com/gpu"), 2);
  PodInfo yaml = ParsePod(
      "metadata: {name: q, namespace: ns}\n"
      "spec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 1}}\n",
      "pod.yaml");
  EXPECT_EQ(yaml.name, "q");
  EXPECT_EQ(yaml.requests.units("nvidia.com/gpu"), 1);
  EXPECT_EQ(ParsePod("apiVersion: v1\nkind: Pod\nmetadata: {name: r}\n", "t").name, "r");
}

TEST(ParsePod, wants_exactly_one_pod) {
  EXPECT_EQ(Error([] { ParsePod("", "pod.yaml"); }),
            "pod.yaml: expected exactly one Pod, found 0 pods and 0 other objects");
  EXPECT_EQ(Error([] { ParsePod("metadata: {name: a}\n---\nmetadata: {name: b}\n", "pod.yaml"); }),
            "pod.yaml: expected exactly one Pod, found 2 pods and 0 other objects");
  EXPECT_EQ(Error([] { ParsePod("kind: Node\n", "pod.yaml"); }),
            "pod.yaml: expected exactly one Pod, found 0 pods and 1 other objects");
}

}  // namespace
}  // namespace gpusched::static_inventory_test
