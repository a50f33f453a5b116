#include "gpusched/codec/yaml_to_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpusched {
namespace {

using nlohmann::json;

TEST(YamlToJson, scalars_keep_yaml_meaning) {
  auto docs = YamlDocumentsToJson(
      "a: 1\nb: \"1\"\nc: true\nd: 'false'\ne: ~\nf:\ng: 1.5e3\nh: 0x10\ni: 05\nj: text\n");
  ASSERT_EQ(docs.size(), 1u);
  json j = json::parse(docs[0]);
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], "1");
  EXPECT_EQ(j["c"], true);
  EXPECT_EQ(j["d"], "false");
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_TRUE(j["f"].is_null());
  EXPECT_EQ(j["g"], 1500.0);
  EXPECT_EQ(j["h"], "0x10");  // not a JSON number: kept as text
  EXPECT_EQ(j["i"], "05");
  EXPECT_EQ(j["j"], "text");
}

TEST(YamlToJson, multi_document_streams_split_and_skip_empty) {
  auto docs = YamlDocumentsToJson("---\nkind: Node\n---\n---\nkind: Pod\nitems: [1, {x: y}]\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(json::parse(docs[1])["items"][1]["x"], "y");
}

TEST(YamlToJson, syntax_errors_name_line_and_column) {
  try {
    YamlDocumentsToJson("a: 1\nb: [unclosed\n");
    FAIL();
  } catch (const YamlError& e) {
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpusched
