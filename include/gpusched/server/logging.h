// Logging setup: spdlog's default logger, as text for people or as one JSON object per line for
// log pipelines ({"time":...,"level":...,"msg":...}, the message JSON-escaped).
//
// Messages carry values from requests and the API server (pod names, annotations, peers, error
// texts), so neither format lets a message forge a line or reach the terminal. The text format
// escapes \n, \r and \t by name, the other C0 controls (ESC among them) and DEL as \xNN, bytes
// that are not UTF-8 (a raw C1 byte such as 0x9b among them) as \xNN, and the C1 controls, the
// Unicode line separators and the bidirectional overrides as \uNNNN; the JSON format escapes the
// same characters the JSON way. Other UTF-8 text is kept as it is.
#pragma once

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
