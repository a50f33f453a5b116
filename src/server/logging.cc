#include "gpusched/server/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

// %* in a pattern: the message as a quoted, escaped JSON string.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string quoted = JsonQuote(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::optional<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

void ConfigureLogging(LogFormat format, spdlog::level::level_enum level,
                      std::shared_ptr<spdlog::sinks::sink> sink) {
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("gpusched", sink);
  if (format == LogFormat::kJson) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%*})");
    logger->set_formatter(std::move(formatter));
  }
  logger->set_level(level);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace gpusched
