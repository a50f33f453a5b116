#include "gpusched/server/logging.h"

#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "testing/test_support.h"

namespace gpusched::logging_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override { ConfigureLogging(LogFormat::kText, spdlog::level::info); }
  std::ostringstream out_;
};

TEST_F(LoggingTest, json_format_writes_one_valid_object_per_line) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
  ConfigureLogging(LogFormat::kJson, spdlog::level::info, sink);
  spdlog::info("pod \"a\" has\ta newline\nand a backslash \\");
  spdlog::debug("not shown at info");
  spdlog::warn("second");
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 2u);
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["level"], "info");
  EXPECT_EQ(first["msg"], "pod \"a\" has\ta newline\nand a backslash \\");
  EXPECT_TRUE(first["time"].get<std::string>().ends_with("Z"));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["level"], "warning");
  EXPECT_EQ(ParseLogFormat("yaml"), std::nullopt);
}

TEST_F(LoggingTest, debug_logs_one_line_per_decision_with_counted_reasons) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
  ConfigureLogging(LogFormat::kText, spdlog::level::debug, sink);
  {
    testing::SampleServer server;
    httplib::Client c("127.0.0.1", server.port());
    std::string body = testing::Fixture("extender/filter-request-nodecache.json");
    ASSERT_EQ(c.Post("/filter", body, "application/json")->status, 200);
    ASSERT_EQ(c.Post("/prioritize", body, "application/json")->status, 200);
  }
  std::string log = out_.str();
  EXPECT_NE(log.find("filter pod=inference/vllm-llama3-8b-7f9c6d5b8-x2x9q nodes=4"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("passed=3 rejected=[1x Insufficient nvidia.com/gpu]"), std::string::npos)
      << log;
  EXPECT_NE(log.find("top=gpu-node-"), std::string::npos) << log;
}

// The message part of a text line: what follows "[gpusched] [level] ".
std::string MessageOf(const std::string& line) {
  size_t at = line.find("] [", line.find("[gpusched]"));
  return at == std::string::npos ? line : line.substr(line.find("] ", at + 3) + 2);
}

TEST_F(LoggingTest, text_format_escapes_what_could_forge_a_line_or_reach_the_terminal) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
  ConfigureLogging(LogFormat::kText, spdlog::level::debug, sink);
  struct Case {
    std::string message;
    std::string written;
  };
  const Case cases[] = {
      {"pod=a\n[2030-01-01 00:00:00.000] [gpusched] [info] FORGED",
       "pod=a\\n[2030-01-01 00:00:00.000] [gpusched] [info] FORGED"},
      {"cr\rtab\t", "cr\\rtab\\t"},
      {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"},
      {"osc \x1b]0;title\x07 \x1b]8;;http://x\x1b\\",
       "osc \\x1b]0;title\\x07 \\x1b]8;;http://x\\x1b\\"},
      {std::string("nul \0 del \x7f", 11), "nul \\x00 del \\x7f"},
      {"raw c1 \x9b"
       "31m, utf-8 c1 \xc2\x9b"
       "31m",
       "raw c1 \\x9b31m, utf-8 c1 \\u009b31m"},
      {"bad utf-8 \xc3\x28 \xed\xa0\x80 \xc0\xaf", "bad utf-8 \\xc3( \\xed\\xa0\\x80 \\xc0\\xaf"},
      {"line sep \xe2\x80\xa8 rlo \xe2\x80\xae", "line sep \\u2028 rlo \\u202e"},
      {"utf-8 kept: gr\xc3\xbc\xc3\x9f \xe2\x9c\x93 \xf0\x9f\x9a\x80",
       "utf-8 kept: gr\xc3\xbc\xc3\x9f \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
      {"back\\slash and \"quotes\" stay", "back\\slash and \"quotes\" stay"},
  };
  for (const auto& c : cases) spdlog::debug("{}", c.message);
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), std::size(cases)) << out_.str();
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(MessageOf(lines[i]), cases[i].written) << lines[i];
    EXPECT_TRUE(lines[i].starts_with("[20")) << lines[i];
    EXPECT_NE(lines[i].find(" [gpusched] [debug] "), std::string::npos) << lines[i];
  }
}

TEST_F(LoggingTest, json_format_escapes_the_controls_json_leaves_raw_and_stays_utf8) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
  ConfigureLogging(LogFormat::kJson, spdlog::level::info, sink);
  spdlog::info("del \x7f c1 \xc2\x9b raw \x9b sep \xe2\x80\xa8 esc \x1b ok \xc3\xbc");
  std::string line = out_.str();
  for (char c : line.substr(0, line.size() - 1)) {
    auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 && b != 0x7f && b != 0x9b) << line;
  }
  auto parsed = nlohmann::json::parse(line);  // throws on invalid UTF-8
  EXPECT_EQ(parsed["msg"], "del \x7f c1 \xc2\x9b raw \\x9b sep \xe2\x80\xa8 esc \x1b ok \xc3\xbc");
}

TEST_F(LoggingTest, a_pod_name_cannot_forge_a_decision_line) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
  ConfigureLogging(LogFormat::kText, spdlog::level::debug, sink);
  auto request = nlohmann::json::parse(testing::Fixture("extender/filter-request-nodecache.json"));
  request["Pod"]["metadata"]["name"] =
      "p\n[2030-01-01 00:00:00.000] [gpusched] [info] FORGED \x1b]0;owned\x07\x1b[2J";
  {
    testing::SampleServer server;
    httplib::Client c("127.0.0.1", server.port());
    ASSERT_EQ(c.Post("/filter", request.dump(), "application/json")->status, 200);
  }
  std::string log = out_.str();
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_EQ(log.find('\x07'), std::string::npos) << log;
  for (const auto& line : Lines(log)) EXPECT_FALSE(line.starts_with("[2030")) << line;
  EXPECT_NE(log.find("pod=inference/p\\n[2030-01-01 00:00:00.000] [gpusched] [info] FORGED "
                     "\\x1b]0;owned\\x07\\x1b[2J nodes=4"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace gpusched::logging_test
