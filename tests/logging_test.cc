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

namespace gpusched {
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

}  // namespace
}  // namespace gpusched
