#include "gpusched/server/logging.h"

#include <cstdint>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void Append(spdlog::memory_buf_t& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

// The length of the UTF-8 sequence at s[i] with its code point in `cp`; 0 when the bytes there are
// not UTF-8 (a stray continuation byte, a truncated or overlong sequence, a surrogate, past
// U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t& cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t length = b < 0x80           ? 1
                  : (b >> 5) == 0x6  ? 2
                  : (b >> 4) == 0xe  ? 3
                  : (b >> 3) == 0x1e ? 4
                                     : 0;
  if (length == 0 || i + length > s.size()) return 0;
  cp = length == 1 ? b : b & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMinOf[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinOf[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return length;
}

// Code points that can forge a line or act on a terminal: C0 controls (newline, carriage return,
// ESC that starts ANSI and OSC sequences), DEL, C1 controls (U+009B is a one-character CSI), the
// Unicode line and paragraph separators, and the bidirectional overrides and isolates that make
// a line read other than it is written.
bool IsUnsafe(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void AppendHex(spdlog::memory_buf_t& out, const char* prefix, uint32_t value, int digits) {
  Append(out, prefix);
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out.push_back(kHex[(value >> shift) & 0xf]);
}

// Appends `text` with every unsafe code point and every byte that is not UTF-8 replaced by
// `escape(out, code_point_or_byte, is_byte)`; everything else is copied as it is. One pass; a text
// of printable ASCII (nearly every line) is copied at once.
template <class Escape>
void AppendSafe(spdlog::memory_buf_t& out, std::string_view text, Escape&& escape) {
  size_t run = 0;  // start of the pending run copied as it is
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7f) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t length = DecodeUtf8(text, i, cp);
    if (length > 0 && !IsUnsafe(cp)) {
      i += length;
      continue;
    }
    Append(out, text.substr(run, i - run));
    escape(out, length > 0 ? cp : b, length == 0);
    i += length > 0 ? length : 1;
    run = i;
  }
  Append(out, text.substr(run));
}

// For the text format: \n, \r and \t by name, other controls and non-UTF-8 bytes as \xNN, the
// rest as \uNNNN, so one message is one line of printable text.
void EscapeForText(spdlog::memory_buf_t& out, uint32_t value, bool is_byte) {
  switch (value) {
    case '\n':
      return Append(out, "\\n");
    case '\r':
      return Append(out, "\\r");
    case '\t':
      return Append(out, "\\t");
    default:
      if (is_byte || value < 0x80) return AppendHex(out, "\\x", value, 2);
      return AppendHex(out, "\\u", value, 4);
  }
}

// For the JSON format, after JsonQuote escaped the C0 controls: the others as \uNNNN, and bytes
// that are not UTF-8 as the text \xNN (an escaped backslash), so every line is valid UTF-8 JSON.
void EscapeForJson(spdlog::memory_buf_t& out, uint32_t value, bool is_byte) {
  AppendHex(out, is_byte ? "\\\\x" : "\\u", value, is_byte ? 2 : 4);
}

std::string_view Payload(const spdlog::details::log_msg& msg) {
  return std::string_view(msg.payload.data(), msg.payload.size());
}

// %* in the text pattern: the message with control characters escaped. Messages carry values
// from requests and the API server (pod names, annotations, peers, error texts): a newline in one
// must not start a forged log line, nor an escape sequence reach the terminal showing the log.
class TextMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendSafe(dest, Payload(msg), EscapeForText);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextMessageFlag>();
  }
};

// %* in the JSON pattern: the message as a quoted, escaped JSON string.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendSafe(dest, JsonQuote(Payload(msg)), EscapeForJson);
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
  } else {
    // spdlog's default layout, with the message escaped.
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<TextMessageFlag>('*').set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %*");
    logger->set_formatter(std::move(formatter));
  }
  logger->set_level(level);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace gpusched
