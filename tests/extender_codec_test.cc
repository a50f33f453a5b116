#include "gpusched/codec/extender_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "gpusched/codec/json_writer.h"
#include "gpusched/codec/k8s_decode.h"
#include "testing/test_support.h"

namespace gpusched::extender_codec_test {
namespace {

using nlohmann::json;
using testing::Fixture;

// Request bodies captured byte for byte from real kube-schedulers (tests/e2e/capture_wire.sh; each
// folder's README says how), oldest first: the wire protocol is the same from 1.26 to 1.36.
const char* const kCapturedVersions[] = {"1.26", "1.34", "1.36"};

std::string Captured(const char* version, const std::string& file) {
  return Fixture(std::string("extender/captured-kube-scheduler-") + version + "/" + file);
}

const char* const kRequestFixtures[] = {
    "extender/filter-request-nodecache.json",
    "extender/filter-request-fullnodes.json",
};
const char* const kCapturedFiles[] = {
    "filter-request.nodecache-true.json",
    "filter-request.nodecache-false.json",
    "prioritize-request.nodecache-true.json",
    "prioritize-request.nodecache-false.json",
};

TEST(ExtenderCodec, captured_nodecache_request_decodes) {
  for (const char* version : kCapturedVersions) {
    SCOPED_TRACE(version);
    auto args = DecodeExtenderArgs(Captured(version, "filter-request.nodecache-true.json"));
    // The 1.26 capture named its pod gpu-pod-1; tests/e2e/capture_wire.sh names it gpu-pod.
    EXPECT_TRUE(args.pod.name == "gpu-pod" || args.pod.name == "gpu-pod-1") << args.pod.name;
    EXPECT_EQ(args.pod.namespace_name, "default");
    EXPECT_EQ(args.pod.phase, PodPhase::kPending);
    EXPECT_EQ(args.pod.requests.units("nvidia.com/gpu"), 1);
    EXPECT_FALSE(args.nodes.has_value());
    ASSERT_TRUE(args.node_names.has_value());
    EXPECT_EQ(*args.node_names,
              (std::vector<std::string_view>{"gpu-node-1", "gpu-node-2", "gpu-node-3"}));
  }
}

TEST(ExtenderCodec, captured_full_nodes_request_decodes) {
  for (const char* version : kCapturedVersions) {
    SCOPED_TRACE(version);
    auto args = DecodeExtenderArgs(Captured(version, "filter-request.nodecache-false.json"));
    EXPECT_FALSE(args.node_names.has_value());
    ASSERT_TRUE(args.nodes.has_value());
    ASSERT_EQ(args.nodes->size(), 3u);
    // In the order of kube-scheduler's node list, which no version promises (1.36 differs).
    std::set<std::string_view> names;
    for (const auto& node : *args.nodes) {
      names.insert(node.info.name);
      EXPECT_EQ(node.info.allocatable.units("nvidia.com/gpu"), 4) << node.info.name;
    }
    EXPECT_EQ(names, (std::set<std::string_view>{"gpu-node-1", "gpu-node-2", "gpu-node-3"}));
  }
}

// Prioritize gets the body filter got, for the nodes that passed it: some of the three (the 1.26
// capture's filter had let two through).
TEST(ExtenderCodec, captured_prioritize_requests_carry_the_filters_shape) {
  for (const char* version : kCapturedVersions) {
    SCOPED_TRACE(version);
    auto names = DecodeExtenderArgs(Captured(version, "prioritize-request.nodecache-true.json"));
    ASSERT_TRUE(names.node_names.has_value());
    EXPECT_FALSE(names.nodes.has_value());
    EXPECT_GE(names.node_names->size(), 2u);
    EXPECT_LE(names.node_names->size(), 3u);
    auto full = DecodeExtenderArgs(Captured(version, "prioritize-request.nodecache-false.json"));
    ASSERT_TRUE(full.nodes.has_value());
    EXPECT_FALSE(full.node_names.has_value());
    EXPECT_GE(full.nodes->size(), 2u);
    EXPECT_LE(full.nodes->size(), 3u);
    EXPECT_EQ(full.pod.requests.units("nvidia.com/gpu"), 1);
  }
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
  EXPECT_EQ(args.pod.requests.units("nvidia.com/gpu"), 2);
  EXPECT_EQ(args.pod.requests.milli("cpu"), 8000);
}

// Every request fixture decodes to what a general JSON library reads in it.
TEST(ExtenderCodec, every_request_fixture_decodes_as_written) {
  std::vector<std::string> files(std::begin(kRequestFixtures), std::end(kRequestFixtures));
  for (const char* version : kCapturedVersions) {
    for (const char* file : kCapturedFiles)
      files.push_back(std::string("extender/captured-kube-scheduler-") + version + "/" + file);
  }
  for (const auto& f : files) {
    std::string text = Fixture(f);
    json expected = json::parse(text);
    ExtenderArgs args = DecodeExtenderArgs(text);
    EXPECT_EQ(args.pod.name, expected["Pod"]["metadata"]["name"].get<std::string>()) << f;
    EXPECT_EQ(args.pod.uid, expected["Pod"]["metadata"].value("uid", "")) << f;
    if (expected["NodeNames"].is_array()) {
      ASSERT_TRUE(args.node_names.has_value()) << f;
      std::vector<std::string> names(args.node_names->begin(), args.node_names->end());
      EXPECT_EQ(names, expected["NodeNames"].get<std::vector<std::string>>()) << f;
    } else {
      ASSERT_TRUE(args.nodes.has_value()) << f;
      const json& items = expected["Nodes"]["items"];
      ASSERT_EQ(args.nodes->size(), items.size()) << f;
      for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(json::parse((*args.nodes)[i].raw_json), items[i]) << f;
        EXPECT_EQ((*args.nodes)[i].info.name, items[i]["metadata"]["name"].get<std::string>());
      }
    }
  }
}

// The answers gpusched writes match the captured ones key for key.
TEST(ExtenderCodec, encoded_answers_match_the_response_fixtures) {
  json filter = json::parse(Fixture("extender/filter-response.json"));
  ExtenderFilterResult result;
  std::vector<std::string> names = filter["NodeNames"].get<std::vector<std::string>>();
  result.node_names.emplace(names.begin(), names.end());
  std::vector<std::pair<std::string, std::string>> failed, unresolvable;
  for (const auto& [node, reason] : filter["FailedNodes"].items())
    failed.emplace_back(node, reason.get<std::string>());
  for (const auto& [node, reason] : filter["FailedAndUnresolvableNodes"].items())
    unresolvable.emplace_back(node, reason.get<std::string>());
  for (const auto& [node, reason] : failed) result.failed_nodes.emplace_back(node, reason);
  for (const auto& [node, reason] : unresolvable)
    result.failed_and_unresolvable_nodes.emplace_back(node, reason);
  result.error = filter["Error"].get<std::string>();
  EXPECT_EQ(json::parse(EncodeExtenderFilterResult(result)), filter);

  json priorities = json::parse(Fixture("extender/prioritize-response.json"));
  HostPriorityList list;
  std::vector<std::string> hosts;
  for (const auto& hp : priorities) hosts.push_back(hp["Host"].get<std::string>());
  for (size_t i = 0; i < hosts.size(); ++i)
    list.hosts.push_back({hosts[i], priorities[i]["Score"].get<int64_t>()});
  EXPECT_EQ(json::parse(EncodeHostPriorityList(list)), priorities);
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
}

// kube-scheduler writes the Go field names exactly; other spellings are not the envelope's keys
// (and two spellings of one key would make the request ambiguous).
TEST(ExtenderCodec, envelope_keys_match_exactly) {
  EXPECT_THROW(DecodeExtenderArgs(R"({"pOD":{"metadata":{"name":"p"}},"NodeNames":["x"]})"),
               DecodeError);
  EXPECT_THROW(DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"nodenames":["x"]})"),
               DecodeError);
  auto args =
      DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["x"]})");
  EXPECT_EQ(*args.node_names, std::vector<std::string_view>{"x"});
}

TEST(ExtenderCodec, a_request_with_both_node_lists_is_refused) {
  try {
    DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":[{}]},"NodeNames":["a","b","c"]})");
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("both NodeNames and Nodes"), std::string::npos)
        << e.what();
  }
}

TEST(ExtenderCodec, unknown_fields_are_ignored_and_escapes_decoded) {
  auto args = DecodeExtenderArgs(
      R"({"Extra":{"deep":[1,2,{"x":null}]},"Pod":{"metadata":{"name":"a\u003cb","future":true},)"
      R"("spec":{"newField":[]}},"NodeNames":["n\u0026m"]})");
  EXPECT_EQ(args.pod.name, "a<b");
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

// The writer scans strings eight bytes at a time: every byte that needs escaping is found at
// every position of a word and of the tail (a raw one would not parse back), and bytes at or
// above 0x80 pass as they are.
TEST(JsonWriterStrings, every_escaped_byte_is_found_at_every_position) {
  const std::string specials("\"\\\x01\x1f\n\t\0", 7);
  for (size_t length : {1u, 7u, 8u, 9u, 16u, 21u}) {
    for (size_t at = 0; at < length; ++at) {
      for (char special : specials) {
        std::string text(length, 'n');
        text[at] = special;
        std::string out;
        JsonWriter(out).String(text);
        EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), text) << length << " " << at;
      }
    }
  }
  std::string plain;
  JsonWriter(plain).String("gpu-node-\xc3\xa9-0001-abcdefgh");
  EXPECT_EQ(plain, "\"gpu-node-\xc3\xa9-0001-abcdefgh\"");
}

}  // namespace
}  // namespace gpusched::extender_codec_test
