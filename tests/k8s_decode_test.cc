#include "gpusched/codec/k8s_decode.h"

#include <gtest/gtest.h>

#include "gpusched/codec/extender_codec.h"
#include "testing/test_support.h"

namespace gpusched {
namespace {

// Decodes `pod_json` through the ExtenderArgs envelope, as the server does.
PodInfo DecodePodText(const std::string& pod_json) {
  return DecodeExtenderArgs(R"({"Pod":)" + pod_json + R"(,"Nodes":null,"NodeNames":[]})").pod;
}

TEST(DecodePod, reads_identity_phase_placement_and_gpusched_annotations) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p","namespace":"ns","uid":"u1",
      "labels":{"team":"ml"},
      "annotations":{"gpusched.io/profile":"training","kubectl.kubernetes.io/last-applied-configuration":"{}"}},
      "spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2"}}}]},
      "status":{"phase":"Running"}})");
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.namespace_name, "ns");
  EXPECT_EQ(p.uid, "u1");
  EXPECT_EQ(p.node_name, "n1");
  EXPECT_EQ(p.phase, PodPhase::kRunning);
  ASSERT_EQ(p.labels.size(), 1u);
  ASSERT_EQ(p.annotations.size(), 1u);  // only gpusched.io/ annotations are kept
  EXPECT_EQ(*p.annotation("gpusched.io/profile"), "training");
  EXPECT_EQ(p.requests.units("nvidia.com/gpu"), 2);
}

TEST(DecodePod, keeps_only_the_gpu_product_of_the_node_selector) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p"},"spec":{"nodeSelector":{
      "kubernetes.io/os":"linux","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"},"containers":[]}})");
  EXPECT_EQ(p.gpu_product_selector, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(DecodePodText(R"({"spec":{"nodeSelector":null,"containers":[]}})").gpu_product_selector,
            "");
}

TEST(DecodePod, applies_init_sidecar_and_overhead_rules) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p"},"spec":{
      "initContainers":[{"name":"side","restartPolicy":"Always","resources":{"requests":{"nvidia.com/gpu":"1"}}},
                        {"name":"init","resources":{"requests":{"nvidia.com/gpu":"3"}}}],
      "containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1}}}],
      "overhead":{"nvidia.com/gpu":"1"}}})");
  EXPECT_EQ(p.requests.units("nvidia.com/gpu"), 5);  // max(1+1, 3+1) + 1
}

TEST(DecodePod, accepts_nulls_where_go_would) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p","labels":null,"annotations":null},
      "spec":{"containers":[{"name":"c","resources":{"requests":null,"limits":null}}],
              "initContainers":null,"overhead":null},"status":null})");
  EXPECT_EQ(p.name, "p");
  EXPECT_TRUE(p.requests.empty());
}

// Issue #25: any user may create such a pod (the API server stores "1e16" as "10e15"); refusing
// them as "fractional" stopped the pod watch for the whole cluster.
TEST(DecodePod, whole_quantities_beyond_the_milli_range_saturate_as_whole_numbers) {
  for (const char* q : {"1e16", "10e15", "9223372036854775807", "99999999999999999999999"}) {
    PodInfo p = DecodePodText(
        std::string(R"({"spec":{"containers":[{"resources":{"requests":{"example.com/foo":")") + q +
        R"(","nvidia.com/gpu":"1"}}}]}})");
    EXPECT_EQ(p.requests.milli("example.com/foo") % 1000, 0) << q;
    EXPECT_GT(p.requests.units("example.com/foo"), int64_t{9'000'000'000'000'000}) << q;
    EXPECT_EQ(p.requests.units("nvidia.com/gpu"), 1) << q;
  }
}

TEST(DecodePod, rejects_bad_quantities_and_types_naming_the_field) {
  try {
    DecodePodText(
        R"({"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"two"}}}]}})");
    FAIL() << "expected DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("nvidia.com/gpu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("containers"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DecodePodText(R"({"spec":{"containers":{"a":1}}})"), DecodeError);
  EXPECT_THROW(DecodePodText(R"({"metadata":{"labels":{"a":{"b":1}}}})"), DecodeError);
}

TEST(DecodeNode, reads_every_fixture_node) {
  for (const char* f : {"01-t4-plain-1gpu.json", "02-t4-timeslice-4-renamed.json",
                        "03-v100-x4-plain.json", "04-a100-40gb-x8-mig-mixed.json",
                        "05-a100-80gb-x8-nomig.json", "06-h100-80gb-x8-mig-single-1g10gb.json",
                        "07-l4-x2-mps-4.json", "08-a100-40gb-x8-mig-reconfig-pending.json"}) {
    NodeInfo n = testing::NodeFixture(f);
    EXPECT_FALSE(n.name.empty()) << f;
    EXPECT_FALSE(n.gpu.product.empty()) << f;
    EXPECT_FALSE(n.allocatable.contains("cpu")) << f;  // only extended resources are kept
  }
  EXPECT_EQ(testing::NodeFixture("03-v100-x4-plain.json").allocatable.units("nvidia.com/gpu"), 4);
}

}  // namespace
}  // namespace gpusched
