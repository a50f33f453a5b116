#include "gpusched/codec/k8s_decode.h"

#include <gtest/gtest.h>

#include "gpusched/codec/extender_codec.h"
#include "testing/test_support.h"

namespace gpusched::k8s_decode_test {
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

TEST(DecodePod, keeps_the_node_selector_entries_on_pin_labels) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p"},"spec":{"nodeSelector":{
      "kubernetes.io/os":"linux","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"},"containers":[]}})");
  ASSERT_EQ(p.pins.selector.size(), 1u);
  EXPECT_EQ(
      p.pins.selector[0],
      (PinRequirement{"nvidia.com/gpu.product", PinOperator::kIn, {"NVIDIA-A100-SXM4-80GB"}}));
  EXPECT_FALSE(p.pins.has_required);
  EXPECT_EQ(DecodePodText(R"({"spec":{"nodeSelector":null,"containers":[]}})").pins, NodePins());
}

TEST(DecodePod, reads_required_and_preferred_node_affinity) {
  PodInfo p = DecodePodText(R"({"spec":{"containers":[],"affinity":{
      "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[]},
      "nodeAffinity":{
        "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[
            {"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4","NVIDIA-T4"]},
            {"key":"topology.kubernetes.io/zone","operator":"In","values":["a"]},
            {"operator":"Gt","values":[40000],"key":"nvidia.com/gpu.memory"}]},
          {"matchExpressions":[{"key":"nvidia.com/gpu.family","operator":"Exists"}]},
          {},
          {"matchExpressions":[{"key":"nvidia.com/gpu.count","operator":"Gt","values":["eight"]}]},
          {"matchExpressions":[{"key":"zone","operator":"Sideways","values":["a"]}]},
          {"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution":[
          {"weight":30,"preference":{"matchExpressions":[
            {"key":"nvidia.com/gpu.product","operator":"NotIn","values":["NVIDIA-T4"]}]}},
          {"weight":50,"preference":{"matchExpressions":[
            {"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}},
          {"weight":0,"preference":{"matchExpressions":[
            {"key":"nvidia.com/gpu.family","operator":"Exists"}]}},
          {"weight":500,"preference":{"matchExpressions":[
            {"key":"nvidia.com/gpu.family","operator":"DoesNotExist"}]}}]}}}})");
  const NodePins& pins = p.pins;
  EXPECT_TRUE(pins.selector.empty());
  ASSERT_TRUE(pins.has_required);
  ASSERT_EQ(pins.required.size(), 6u);
  // Requirements on labels gpusched does not keep are left out (they are taken as met).
  EXPECT_EQ(pins.required[0],
            (PinTerm{{{"nvidia.com/gpu.product", PinOperator::kIn, {"NVIDIA-L4", "NVIDIA-T4"}},
                      {"nvidia.com/gpu.memory", PinOperator::kGt, {}, 40000}}}));
  EXPECT_EQ(pins.required[1], (PinTerm{{{"nvidia.com/gpu.family", PinOperator::kExists, {}}}}));
  // Empty, unparsable (a Gt that is no integer, an unknown operator, even on other labels): none
  // matches anything, as in Kubernetes. matchFields alone: known to constrain nothing here.
  EXPECT_TRUE(pins.required[2].matches_nothing);
  EXPECT_TRUE(pins.required[3].matches_nothing);
  EXPECT_TRUE(pins.required[4].matches_nothing);
  EXPECT_EQ(pins.required[5], PinTerm());
  // Preferred terms: only those that can tell nodes apart; weights clamped to 100.
  ASSERT_EQ(pins.preferred.size(), 2u);
  EXPECT_EQ(pins.preferred[0].weight, 30);
  EXPECT_EQ(pins.preferred[0].term.requirements[0].op, PinOperator::kNotIn);
  EXPECT_EQ(pins.preferred[1].weight, 100);
}

TEST(DecodePod, node_affinity_of_the_wrong_shape_is_a_decode_error) {
  const char* const wrong[] = {
      R"({"nodeAffinity":[]})",
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":{}}}})",
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":"x"}]}]}}})",
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchFields":["metadata.name"]}]}}})",
      R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
          {"weight":"heavy","preference":{}}]}})"};
  for (const char* affinity : wrong) {
    EXPECT_THROW(
        DecodePodText(std::string(R"({"spec":{"containers":[],"affinity":)") + affinity + "}}"),
        DecodeError)
        << affinity;
  }
  EXPECT_THROW(DecodePodText(R"({"spec":{"containers":[],"nodeSelector":[]}})"), DecodeError);
}

TEST(DecodePod, pins_past_their_budget_are_dropped_in_bounded_memory) {
  // 100,000 expressions in one term, then 100,000 values in one: the pod keeps no pin at all,
  // and what the decoder holds meanwhile is bounded by the budget, not by the input.
  std::string many = R"({"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]})";
  std::string expressions = many;
  for (int i = 1; i < 100000; ++i) expressions += "," + many;
  std::string values = R"("v0")";
  for (int i = 1; i < 100000; ++i) values += R"(,"v)" + std::to_string(i) + R"(")";
  for (const std::string& term :
       {R"({"matchExpressions":[)" + expressions + "]}",
        R"({"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":[)" +
            values + "]}]}"}) {
    PodInfo p = DecodePodText(
        R"({"spec":{"containers":[],"nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"},
        "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
        "nodeSelectorTerms":[)" +
        term + "]}}}}}");
    EXPECT_EQ(p.pins, NodePins());
    EXPECT_FALSE(p.pins.has_required_pins());
  }
  // Within the budget, everything is kept.
  PodInfo p = DecodePodText(
      R"({"spec":{"containers":[],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
      "nodeSelectorTerms":[{"matchExpressions":[)" +
      many + "," + many + "]}]}}}}}");
  ASSERT_EQ(p.pins.required.size(), 1u);
  EXPECT_EQ(p.pins.required[0].requirements.size(), 2u);
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

TEST(DecodePod, reads_priority_creation_time_and_the_controller_reference) {
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p","creationTimestamp":"2026-11-25T14:30:27Z",
      "ownerReferences":[
        {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u-cm"},
        {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs-1","uid":"u-rs","controller":true,
         "blockOwnerDeletion":true},
        {"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u-j","controller":true}]},
      "spec":{"priority":1000,"containers":[]}})");
  EXPECT_EQ(p.priority, 1000);
  EXPECT_EQ(p.created_unix, 1795617027);  // date -d 2026-11-25T14:30:27Z +%s
  EXPECT_TRUE(p.controller.known());
  // The first reference marked controller; a second one (invalid in Kubernetes) is ignored.
  EXPECT_EQ(p.controller.kind, "ReplicaSet");
  EXPECT_EQ(p.controller.name, "rs-1");
  EXPECT_EQ(p.controller.uid, "u-rs");

  PodInfo bare = DecodePodText(R"({"metadata":{"name":"p","ownerReferences":[
      {"kind":"ReplicaSet","name":"rs","uid":"u","controller":false}]},"spec":{"containers":[]}})");
  EXPECT_EQ(bare.priority, 0);
  EXPECT_EQ(bare.created_unix, 0);
  EXPECT_FALSE(bare.controller.known());
}

TEST(DecodePod, malformed_planning_fields_read_as_unknown_not_as_errors) {
  const std::string long_name(kMaxOwnerRefField + 1, 'x');
  PodInfo p = DecodePodText(R"({"metadata":{"name":"p","creationTimestamp":"yesterday",
      "ownerReferences":[{"kind":"ReplicaSet","name":")" +
                            long_name + R"(","uid":"u","controller":true}]},
      "spec":{"priority":"high","containers":[]}})");
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.created_unix, 0);
  EXPECT_EQ(p.priority, 0);
  EXPECT_FALSE(p.controller.known());  // an overlong field: the reference is not kept
  // Out of int32's range: clamped, as no API server would store it.
  EXPECT_EQ(DecodePodText(R"({"spec":{"priority":99999999999,"containers":[]}})").priority,
            2147483647);
  EXPECT_EQ(DecodePodText(R"({"spec":{"priority":-7,"containers":[]}})").priority, -7);
  // The wrong JSON shape is a decode error like any other.
  EXPECT_THROW(DecodePodText(R"({"metadata":{"ownerReferences":{"kind":"x"}}})"), DecodeError);
}

TEST(ParseRfc3339Seconds, reads_kubernetes_timestamps_and_refuses_the_rest) {
  EXPECT_EQ(ParseRfc3339Seconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Seconds("2000-02-29T12:00:00Z"), 951825600);
  EXPECT_EQ(ParseRfc3339Seconds("2026-11-25T14:30:27.123456Z"), 1795617027);
  EXPECT_EQ(ParseRfc3339Seconds("2026-11-25T15:30:27+01:00"), 1795617027);
  EXPECT_EQ(ParseRfc3339Seconds("2026-11-25T09:30:27-05:00"), 1795617027);
  for (const char* bad :
       {"", "2026-11-25", "2026-11-25 14:30:27Z", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-11-25T24:00:00Z", "2026-11-25T14:30:27",
        "1969-12-31T23:59:59Z", "2026-11-25T14:30:27.Z", "2026-11-25T14:30:27Zjunk",
        "2026-11-25T14:30:27+0100", "+2026-11-25T14:30:27Z", "2026-11-25T14:3a:27Z"}) {
    EXPECT_EQ(ParseRfc3339Seconds(bad), std::nullopt) << bad;
  }
}

// Issue #37 case 2: 8,000 distinct nvidia.com/mig-* names (requests = limits) in a legal pod.
std::string PodAskingMigProfiles(int profiles) {
  std::string list = "{";
  for (int i = 0; i < profiles; ++i) {
    list +=
        (i ? "," : "") + std::string(R"("nvidia.com/mig-)") + std::to_string(i) + R"(g.1gb":"1")";
  }
  list += "}";
  return R"({"metadata":{"name":"fat","namespace":"ns","uid":"u"},"spec":{"containers":[)"
         R"({"resources":{"requests":)" +
         list + R"(,"limits":)" + list + R"(}}]}})";
}

TEST(DecodePod, extended_resources_past_the_budget_are_counted_not_kept) {
  PodInfo pod = testing::PodFromJson(PodAskingMigProfiles(8000));
  EXPECT_LE(pod.requests.size(), kMaxExtendedResourceEntries);
  EXPECT_LE(pod.max_container_requests.size(), kMaxExtendedResourceEntries);
  EXPECT_EQ(pod.resources_not_kept, 16000 - kMaxExtendedResourceEntries);
  PodInfo small = testing::PodFromJson(PodAskingMigProfiles(64));
  EXPECT_EQ(small.requests.size(), 64u);
  EXPECT_EQ(small.resources_not_kept, 0u);
  // Judged from a request, it is judged on the entries kept (kube-scheduler checks every
  // extended resource itself first): the request is answered, as issue #25 asked.
  EXPECT_NO_THROW(DecodePodText(PodAskingMigProfiles(8000)));
}

TEST(DecodeNode, reads_every_fixture_node) {
  for (const char* f : {"01-t4-plain-1gpu.json", "02-t4-timeslice-4-renamed.json",
                        "03-v100-x4-plain.json", "04-a100-40gb-x8-mig-mixed.json",
                        "05-a100-80gb-x8-nomig.json", "06-h100-80gb-x8-mig-single-1g10gb.json",
                        "07-l4-x2-mps-4.json", "08-a100-40gb-x8-mig-reconfig-pending.json"}) {
    NodeInfo n = testing::NodeFixture(f);
    EXPECT_FALSE(n.name.empty()) << f;
    EXPECT_FALSE(n.gpu.product.empty()) << f;
    // What decides packing is kept: cpu, memory, pods and the extended resources; not storage.
    EXPECT_TRUE(n.allocatable.contains("cpu")) << f;
    EXPECT_TRUE(n.allocatable.contains("memory")) << f;
    EXPECT_TRUE(n.allocatable.contains("pods")) << f;
    EXPECT_FALSE(n.allocatable.contains("ephemeral-storage")) << f;
  }
  EXPECT_EQ(testing::NodeFixture("03-v100-x4-plain.json").allocatable.units("nvidia.com/gpu"), 4);
}

TEST(DecodeNode, keeps_the_labels_pins_can_name) {
  NodeInfo n = testing::NodeFixture("05-a100-80gb-x8-nomig.json");
  EXPECT_EQ(n.pin_labels.Find("nvidia.com/gpu.product"), n.gpu.product);
  EXPECT_FALSE(n.pin_labels.Find("kubernetes.io/hostname"));    // pins on it are not judged
  EXPECT_FALSE(n.pin_labels.Find("nvidia.com/gfd.timestamp"));  // differs on every node
  EXPECT_TRUE(n.pin_labels.complete());
}

}  // namespace
}  // namespace gpusched::k8s_decode_test
