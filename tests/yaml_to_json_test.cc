#include "gpusched/codec/yaml_to_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/test_support.h"

namespace gpusched::yaml_to_json_test {
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

// The message of the YamlError YamlDocumentsToJson throws, or "no error".
std::string Error(const std::string& yaml) {
  try {
    YamlDocumentsToJson(yaml);
  } catch (const YamlError& e) {
    return e.what();
  }
  return "no error";
}

TEST(YamlToJson, long_scalars_are_checked_without_recursion) {
  // std::regex overflowed the stack on these.
  std::string digits(50000, '7');
  auto docs = YamlDocumentsToJson("a: " + digits + "\nb: " + digits + "x\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0], "{\"a\":" + digits + ",\"b\":\"" + digits + "x\"}");
}

TEST(YamlToJson, numbers_follow_json_grammar) {
  json j =
      json::parse(YamlDocumentsToJson("[0, -1, 1.25, 2e9, 3E-2, -0.5e+1, 1., .5, 1e, 00, "
                                      "1.5.2, +1, 1_000]")[0]);
  EXPECT_EQ(j, json::parse(R"([0, -1, 1.25, 2e9, 3E-2, -0.5e+1, "1.", ".5", "1e", "00",
                               "1.5.2", "+1", "1_000"])"));
}

TEST(YamlToJson, aliases_expand_within_the_budget) {
  auto docs = YamlDocumentsToJson("base: &b {gpu: 1}\nitems: [*b, *b]\n");
  EXPECT_EQ(json::parse(docs[0])["items"][1]["gpu"], 1);
}

TEST(YamlToJson, an_alias_bomb_fails_at_once) {
  std::string yaml = testing::BillionLaughsYaml();
  EXPECT_NE(Error(yaml).find("alias expansion exceeds the limit"), std::string::npos)
      << Error(yaml);
}

TEST(YamlToJson, deep_nesting_and_alias_cycles_are_refused) {
  EXPECT_EQ(Error(std::string(200, '[') + std::string(200, ']')), "no error");
  EXPECT_NE(Error(std::string(300, '[') + std::string(300, ']')).find("nested deeper than 256"),
            std::string::npos);
  // yaml-cpp's own guard, past 2000 levels, with a message instead of "bad file".
  EXPECT_NE(Error(std::string(100000, '[')).find("nested deeper than"), std::string::npos);
  // An alias inside its own anchor: a cycle, endlessly deep.
  EXPECT_NE(Error("&a [*a]").find("nested deeper than 256"), std::string::npos) << Error("&a [*a]");
  EXPECT_NE(Error("&a {x: *a}").find("nested deeper than 256"), std::string::npos);
}

TEST(YamlToJson, syntax_errors_quote_input_bytes_escaped) {
  std::string message = Error("a: \"\\\x01\"\n");  // a: "\<0x01>"
  EXPECT_NE(message.find("unknown escape character: \\x01"), std::string::npos) << message;
}

}  // namespace
}  // namespace gpusched::yaml_to_json_test
