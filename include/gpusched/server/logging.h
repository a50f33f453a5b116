// Logging setup: spdlog's default logger, as text for people or as one JSON object per line for
// log pipelines ({"time":...,"level":...,"msg":...}, the message JSON-escaped).
#ifndef GPUSCHED_SERVER_LOGGING_H_
#define GPUSCHED_SERVER_LOGGING_H_

#include <memory>
#include <optional>
#include <string_view>

#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>

namespace gpusched {

enum class LogFormat { kText, kJson };
std::optional<LogFormat> ParseLogFormat(std::string_view text);

// Replaces the default logger with one writing to `sink` (stderr when null) in `format`.
void ConfigureLogging(LogFormat format, spdlog::level::level_enum level,
                      std::shared_ptr<spdlog::sinks::sink> sink = nullptr);

}  // namespace gpusched

#endif  // GPUSCHED_SERVER_LOGGING_H_
