#include "gpusched/codec/extender_codec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/codec/k8s_decode.h"
#include "testing/test_support.h"

namespace gpusched {
namespace {

using nlohmann::json;
using testing::Fixture;

const char* const kRequestFixtures[] = {
    "extender/filter-request-nodecache.json",
    "extender/filter-request-fullnodes.json",
    "extender/captured-kube-scheduler-1.26/filter-request.nodecache-true.json",
    "extender/captured-kube-scheduler-1.26/filter-request.nodecache-false.json",
    "extender/captured-kube-scheduler-1.26/prioritize-request.nodecache-true.json",
    "extender/captured-kube-scheduler-1.26/prioritize-request.nodecache-false.json",
};

TEST(ExtenderCodec, captured_nodecache_request_decodes) {
  auto args = DecodeExtenderArgs(
      Fixture("extender/captured-kube-scheduler-1.26/filter-request.nodecache-true.json"));
  EXPECT_EQ(args.pod.info.name, "gpu-pod-1");
  EXPECT_EQ(args.pod.info.namespace_name, "default");
  EXPECT_EQ(args.pod.info.phase, PodPhase::kPending);
  EXPECT_EQ(args.pod.info.requests.units("nvidia.com/gpu"), 1);
  EXPECT_FALSE(args.nodes.has_value());
  ASSERT_TRUE(args.node_names.has_value());
  EXPECT_EQ(*args.node_names,
            (std::vector<std::string_view>{"gpu-node-1", "gpu-node-2", "gpu-node-3"}));
}

TEST(ExtenderCodec, captured_full_nodes_request_decodes) {
  auto args = DecodeExtenderArgs(
      Fixture("extender/captured-kube-scheduler-1.26/filter-request.nodecache-false.json"));
  EXPECT_FALSE(args.node_names.has_value());
  ASSERT_TRUE(args.nodes.has_value());
  ASSERT_EQ(args.nodes->size(), 3u);
  EXPECT_EQ((*args.nodes)[0].info.name, "gpu-node-1");
  EXPECT_EQ((*args.nodes)[0].info.allocatable.units("nvidia.com/gpu"), 4);
}

TEST(ExtenderCodec, full_nodes_keep_their_exact_json) {
  std::string text = Fixture("extender/filter-request-fullnodes.json");
  auto args = DecodeExtenderArgs(text);
  ASSERT_EQ(args.nodes->size(), 2u);
  json original = json::parse(text);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(json::parse((*args.nodes)[i].raw_json), original["Nodes"]["items"][i]);
    // The raw text is a slice of the request: byte-identical to the input.
    EXPECT_NE(text.find((*args.nodes)[i].raw_json), std::string::npos);
  }
  EXPECT_EQ((*args.nodes)[0].info.gpu.product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ((*args.nodes)[1].info.gpu.product, "NVIDIA-A100-SXM4-40GB");
  EXPECT_EQ(args.pod.info.requests.units("nvidia.com/gpu"), 2);
  EXPECT_EQ(args.pod.info.requests.milli("cpu"), 8000);
}

TEST(ExtenderCodec, every_request_fixture_round_trips) {
  for (const char* f : kRequestFixtures) {
    std::string text = Fixture(f);
    std::string encoded = EncodeExtenderArgs(DecodeExtenderArgs(text));
    EXPECT_EQ(json::parse(encoded), json::parse(text)) << f;
  }
}

TEST(ExtenderCodec, every_response_fixture_round_trips) {
  auto check = [](const char* file, auto decode, auto encode) {
    std::string text = Fixture(file);
    std::string once = encode(decode(text));
    EXPECT_EQ(json::parse(once), json::parse(text)) << file;
    EXPECT_EQ(encode(decode(once)), once) << file;
  };
  check("extender/filter-response.json", DecodeExtenderFilterResult, EncodeExtenderFilterResult);
  check("extender/prioritize-response.json", DecodeHostPriorityList, EncodeHostPriorityList);
  check("extender/bind-request.json", DecodeExtenderBindingArgs, EncodeExtenderBindingArgs);
  check("extender/bind-response.json", DecodeExtenderBindingResult, EncodeExtenderBindingResult);
  check("extender/preempt-response.json", DecodeExtenderPreemptionResult,
        EncodeExtenderPreemptionResult);
  check("extender/preempt-request-nodecache.json", DecodeExtenderPreemptionArgs,
        EncodeExtenderPreemptionArgs);
}

TEST(ExtenderCodec, preemption_args_decode_meta_victims) {
  auto args = DecodeExtenderPreemptionArgs(Fixture("extender/preempt-request-nodecache.json"));
  EXPECT_FALSE(args.node_to_victims.has_value());
  ASSERT_TRUE(args.node_to_meta_victims.has_value());
  EXPECT_EQ(args.node_to_meta_victims->size(), 2u);
  EXPECT_FALSE(args.node_to_meta_victims->front().second.pod_uids.empty());
  EXPECT_EQ(args.pod.info.requests.units("nvidia.com/gpu"), 2);
}

TEST(ExtenderCodec, preemption_args_with_full_victims_round_trip) {
  std::string pod = R"({"metadata":{"name":"v","uid":"u-1"},"spec":{"nodeName":"n1"}})";
  std::string text = R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"n1":{"Pods":[)" +
                     pod + R"(],"NumPDBViolations":1}},"NodeNameToMetaVictims":null})";
  auto args = DecodeExtenderPreemptionArgs(text);
  ASSERT_TRUE(args.node_to_victims.has_value());
  EXPECT_EQ((*args.node_to_victims)[0].second.pods[0].info.uid, "u-1");
  EXPECT_EQ((*args.node_to_victims)[0].second.num_pdb_violations, 1);
  EXPECT_EQ(json::parse(EncodeExtenderPreemptionArgs(args)), json::parse(text));
}

TEST(ExtenderCodec, filter_result_uses_exact_keys_and_nulls) {
  ExtenderFilterResult r;
  r.node_names = std::vector<std::string_view>{"a"};
  r.failed_nodes = {{"b", "Insufficient nvidia.com/gpu"}};
  EXPECT_EQ(EncodeExtenderFilterResult(r),
            R"({"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"Insufficient nvidia.com/gpu"},)"
            R"("FailedAndUnresolvableNodes":{},"Error":""})");
  ExtenderFilterResult full;
  full.nodes_raw = std::vector<std::string_view>{R"({"metadata":{"name":"a"}})"};
  EXPECT_EQ(EncodeExtenderFilterResult(full),
            R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"}}]},"NodeNames":null,)"
            R"("FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
}

TEST(ExtenderCodec, scores_are_json_integers) {
  EXPECT_EQ(EncodeHostPriorityList({{{"n1", 8}, {"n2", 0}}, {}}),
            R"([{"Host":"n1","Score":8},{"Host":"n2","Score":0}])");
  EXPECT_THROW(DecodeHostPriorityList(R"([{"Host":"n1","Score":8.0}])"), DecodeError);
}

// kube-scheduler writes the Go field names exactly; other spellings are not the envelope's keys
// (and two spellings of one key would make the request ambiguous).
TEST(ExtenderCodec, envelope_keys_match_exactly) {
  EXPECT_THROW(
      DecodeExtenderArgs(R"({"pOD":{"metadata":{"name":"p"}},"NodeNames":["x"]})"), DecodeError);
  EXPECT_THROW(DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"nodenames":["x"]})"),
               DecodeError);
  auto args = DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["x"]})");
  EXPECT_EQ(*args.node_names, std::vector<std::string_view>{"x"});
}

TEST(ExtenderCodec, a_request_with_both_node_lists_is_refused) {
  try {
    DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":[{}]},"NodeNames":["a","b","c"]})");
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("both NodeNames and Nodes"), std::string::npos) << e.what();
  }
}

TEST(ExtenderCodec, unknown_fields_are_ignored_and_escapes_decoded) {
  auto args = DecodeExtenderArgs(
      R"({"Extra":{"deep":[1,2,{"x":null}]},"Pod":{"metadata":{"name":"a\u003cb","future":true},)"
      R"("spec":{"newField":[]}},"NodeNames":["n\u0026m"]})");
  EXPECT_EQ(args.pod.info.name, "a<b");
  EXPECT_EQ((*args.node_names)[0], "n&m");
}

TEST(ExtenderCodec, malformed_requests_throw_one_line_errors) {
  const char* const bad[] = {
      "",
      "not json",
      "[]",
      "null",
      R"({"Pod":5,"NodeNames":[]})",
      R"({"Pod":{},"NodeNames":"gpu-node-1"})",
      R"({"Pod":{},"NodeNames":[1,2]})",
      R"({"Pod":{},"Nodes":{"items":[5]}})",
      R"({"Pod":{},"Nodes":{"items":{}}})",
      R"({"NodeNames":[]})",
      R"({"Pod":null,"NodeNames":[]})",
      R"({"Pod":{}})",
      R"({"Pod":{},"NodeNames":[]} trailing)",
      R"({"Pod":{},"NodeNames":[]}{})",
      R"({"Pod":{"metadata":{"name":"p"},"NodeNames":[])",
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1x"}}}]}},"NodeNames":[]})",
  };
  for (const char* b : bad) {
    try {
      DecodeExtenderArgs(b);
      ADD_FAILURE() << "accepted: " << b;
    } catch (const DecodeError& e) {
      std::string message = e.what();
      EXPECT_FALSE(message.empty());
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(ExtenderCodec, error_body_is_one_json_line) {
  EXPECT_EQ(EncodeError("bad \"input\"\n"), R"({"error":"bad \"input\"\n"})");
}

}  // namespace
}  // namespace gpusched
