#include "gpusched/server/http_request_parser.h"

#include <algorithm>

#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr size_t kMaxChunkLine = 1024;  // hex size plus extensions

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerCase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), Lower);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the comma-separated header value lists `token` (case-insensitive).
bool ListsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (EqualsIgnoreCase(TrimSpace(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// A field value may hold visible characters, spaces and tabs, nothing else below 0x20.
bool IsFieldValue(std::string_view v) {
  return std::none_of(v.begin(), v.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// The first bare line end in s[from, to): an LF without the CR before it, or a CR followed by
// anything but LF; npos when there is none. A CR at the very end of `s` waits for its next byte.
size_t FindBareLineEnd(std::string_view s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return i;
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] != '\n') return i;
  }
  return std::string_view::npos;
}

// A decimal Content-Length of at most 18 digits (anything longer exceeds every body limit).
bool ParseLength(std::string_view s, size_t& out) {
  if (s.empty() || s.size() > 18) return false;
  size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::string_view HttpRequest::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

bool RequestBudget::Take(size_t more, size_t total) {
  size_t cap = total <= kSmallRequestBytes ? limit_ : large_request_limit();
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (more > cap || used > cap - more) return false;
  } while (!used_.compare_exchange_weak(used, used + more, std::memory_order_relaxed));
  return true;
}

HttpRequestParser::HttpRequestParser(HttpLimits limits, RequestBudget* budget)
    : limits_(limits), budget_(budget) {}

HttpRequestParser::~HttpRequestParser() { Hold(0); }

HttpRequestParser::State HttpRequestParser::Feed(std::string_view bytes) {
  if (state_ != State::kNeedMore) return state_;
  // Held before they are copied, so the budget bounds memory, not just what is counted after.
  if (!Hold(Needed(bytes.size()))) return OverBudget();
  buffer_.append(bytes);
  return Advance();
}

// Parses, then holds exactly what the parser keeps now (less once a header is consumed).
HttpRequestParser::State HttpRequestParser::Advance() {
  State s = Parse();
  if (s != State::kFailed && !Hold(Needed(0))) return OverBudget();
  return s;
}

void HttpRequestParser::DropBody() {
  request_.body = std::string();
  if (state_ != State::kFailed) Hold(Needed(0));
}

HttpRequestParser::State HttpRequestParser::Reset() {
  if (state_ != State::kComplete) return state_;
  request_ = HttpRequest{};
  stage_ = Stage::kHeaders;
  scanned_ = 0;
  line_scanned_ = 0;
  content_length_ = 0;
  chunk_left_ = 0;
  state_ = State::kNeedMore;
  return Advance();
}

size_t HttpRequestParser::Needed(size_t incoming) const {
  size_t bytes = buffer_.size() + incoming + request_.body.size();
  // A Content-Length body is held whole from its header on (the buffer is sized for it then).
  return stage_ == Stage::kLengthBody ? std::max(bytes, content_length_) : bytes;
}

bool HttpRequestParser::Hold(size_t bytes) {
  size_t charged = bytes > RequestBudget::kFreeBytes ? bytes - RequestBudget::kFreeBytes : 0;
  if (!budget_ || charged == held_) return true;
  if (charged < held_) {
    budget_->Give(held_ - charged);
  } else if (!budget_->Take(charged - held_, charged)) {
    return false;
  }
  held_ = charged;
  return true;
}

HttpRequestParser::State HttpRequestParser::OverBudget() {
  return Fail(503, "server busy: requests in flight hold its limit of " +
                       std::to_string(budget_->limit()) + " bytes; retry later");
}

HttpRequestParser::State HttpRequestParser::Fail(int status, std::string message) {
  error_status_ = status;
  error_ = std::move(message);
  buffer_ = std::string();
  request_.body = std::string();
  Hold(0);
  return state_ = State::kFailed;
}

HttpRequestParser::State HttpRequestParser::Parse() {
  if (stage_ == Stage::kHeaders) {
    state_ = ParseHeader();
    if (state_ != State::kNeedMore || stage_ == Stage::kHeaders) return state_;
  }
  if (stage_ == Stage::kLengthBody) return state_ = ParseLengthBody();
  if (stage_ == Stage::kDone) return state_ = State::kComplete;
  return state_ = ParseChunks();
}

HttpRequestParser::State HttpRequestParser::ParseHeader() {
  // Clients may send blank lines between requests (RFC 9112 2.2); they are not the header.
  size_t lead = 0;
  while (buffer_.compare(lead, 2, kCrlf) == 0) lead += 2;
  if (lead > 0) {
    buffer_.erase(0, lead);
    scanned_ = 0;
  }
  // Only the first max_header_bytes + 1 bytes are read: they decide the answer (a header that long
  // is 431 whatever follows), so it does not depend on how the bytes were split into reads.
  std::string_view window(buffer_.data(), std::min(buffer_.size(), limits_.max_header_bytes + 1));
  size_t from = scanned_ >= 3 ? scanned_ - 3 : 0;
  size_t end = window.find("\r\n\r\n", from);
  // Only the new bytes (and the one before them, a CR that waited for its successor) are checked:
  // each header byte is looked at a bounded number of times however it is split into reads.
  size_t checked = scanned_ > 0 ? scanned_ - 1 : 0;
  if (FindBareLineEnd(window, checked, end == std::string::npos ? window.size() : end + 4) !=
      std::string_view::npos) {
    return Fail(400, "bare LF or CR in the request header: lines end in CRLF");
  }
  if (end == std::string::npos) {
    if (window.size() > limits_.max_header_bytes) {
      return Fail(
          431, "request header larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
    }
    scanned_ = window.size();
    return State::kNeedMore;
  }
  if (end + 4 > limits_.max_header_bytes) {
    return Fail(
        431, "request header larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
  }
  std::string_view head(buffer_.data(), end + 2);  // every line ends in CRLF
  size_t eol = head.find(kCrlf);
  if (!ParseRequestLine(head.substr(0, eol))) return state_;
  head.remove_prefix(eol + 2);
  while (!head.empty()) {
    eol = head.find(kCrlf);
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Fail(400, "malformed header line");
    }
    std::string_view value = TrimSpace(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Fail(400, "control character in a header value");
    if (request_.headers.size() == limits_.max_headers) {
      return Fail(431, "more than " + std::to_string(limits_.max_headers) + " header fields");
    }
    request_.headers.emplace_back(LowerCase(line.substr(0, colon)), std::string(value));
  }
  buffer_.erase(0, end + 4);
  scanned_ = 0;  // from here on: trailer bytes of a chunked body
  if (!ApplyHeaders()) return state_;
  return State::kNeedMore;
}

bool HttpRequestParser::ParseRequestLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    Fail(400, "malformed request line");
    return false;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method) || target.empty() || !IsFieldValue(target) ||
      target.find('\t') != std::string_view::npos) {
    Fail(400, "malformed request line");
    return false;
  }
  if (version == "HTTP/1.1") {
    request_.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request_.minor_version = 0;
  } else {
    Fail(version.starts_with("HTTP/") ? 505 : 400, "unsupported HTTP version");
    return false;
  }
  request_.method = std::string(method);
  request_.target = std::string(target);
  return true;
}

// HTTP/1.1 requires exactly one Host header; HTTP/1.0 clients may omit it. Two are ambiguous
// whatever the version (which authority does the request address?).
bool HttpRequestParser::CheckHost() {
  size_t hosts =
      static_cast<size_t>(std::count_if(request_.headers.begin(), request_.headers.end(),
                                        [](const auto& header) { return header.first == "host"; }));
  if (hosts > 1) {
    Fail(400, "more than one Host header");
    return false;
  }
  if (hosts == 0 && request_.minor_version == 1) {
    Fail(400, "no Host header: HTTP/1.1 requires one");
    return false;
  }
  return true;
}

bool HttpRequestParser::ApplyHeaders() {
  bool has_length = false;
  bool chunked = false;
  bool close = false;
  bool keep_alive = false;
  for (const auto& [name, value] : request_.headers) {
    if (name == "content-length") {
      size_t length = 0;
      if (!ParseLength(value, length) || (has_length && length != content_length_)) {
        Fail(400, "invalid Content-Length");
        return false;
      }
      has_length = true;
      content_length_ = length;
    } else if (name == "transfer-encoding") {
      if (!EqualsIgnoreCase(value, "chunked") || chunked) {
        Fail(501, "unsupported Transfer-Encoding \"" + QuoteForMessage(value, 40) +
                      "\": send Content-Length or chunked");
        return false;
      }
      chunked = true;
    } else if (name == "content-encoding") {
      if (!EqualsIgnoreCase(value, "identity")) {
        Fail(415, "unsupported Content-Encoding: send the JSON body uncompressed");
        return false;
      }
    } else if (name == "connection") {
      close = close || ListsToken(value, "close");
      keep_alive = keep_alive || ListsToken(value, "keep-alive");
    } else if (name == "expect") {
      if (!EqualsIgnoreCase(value, "100-continue")) {
        Fail(417, "unsupported Expect");
        return false;
      }
      request_.expects_continue = true;
    }
  }
  if (has_length && chunked) {
    Fail(400, "both Content-Length and Transfer-Encoding");
    return false;
  }
  if (!CheckHost()) return false;
  request_.keep_alive = !close && (request_.minor_version == 1 || keep_alive);
  if (has_length && content_length_ > limits_.max_body_bytes) {
    Fail(413, "request body of " + std::to_string(content_length_) +
                  " bytes is over the limit of " + std::to_string(limits_.max_body_bytes) +
                  " bytes");
    return false;
  }
  if (has_length && content_length_ > buffer_.size()) {
    // Held whole before a byte of it is read, and the buffer sized once: no regrowth, no copies.
    if (!Hold(content_length_)) {
      OverBudget();
      return false;
    }
    buffer_.reserve(content_length_);
  }
  stage_ = chunked ? Stage::kChunkSize : (content_length_ > 0 ? Stage::kLengthBody : Stage::kDone);
  return true;
}

HttpRequestParser::State HttpRequestParser::ParseLengthBody() {
  if (buffer_.size() < content_length_) return State::kNeedMore;
  if (buffer_.size() == content_length_) {
    request_.body = std::move(buffer_);
    buffer_ = std::string();
  } else {
    request_.body.assign(buffer_, 0, content_length_);
    buffer_ = buffer_.substr(content_length_);  // not erase: that would keep the body's capacity
  }
  stage_ = Stage::kDone;
  return State::kComplete;
}

HttpRequestParser::State HttpRequestParser::ParseChunks() {
  size_t pos = 0;
  State result = State::kNeedMore;
  while (result == State::kNeedMore) {
    std::string_view rest(buffer_.data() + pos, buffer_.size() - pos);
    if (stage_ == Stage::kChunkData) {
      size_t n = std::min(chunk_left_, rest.size());
      if (n == 0) break;
      request_.body.append(rest.substr(0, n));
      pos += n;
      chunk_left_ -= n;
      if (chunk_left_ == 0) stage_ = Stage::kChunkDataEnd;
      continue;
    }
    if (stage_ == Stage::kChunkDataEnd) {
      if (rest.empty()) break;
      if (rest[0] != '\r' || (rest.size() >= 2 && rest[1] != '\n')) {
        return Fail(400, "malformed chunked body: chunk data must end in CRLF");
      }
      if (rest.size() < 2) break;
      pos += 2;
      stage_ = Stage::kChunkSize;
      continue;
    }
    // A line is searched once however it is split into reads (line_scanned_). Its length limit
    // fails it as soon as its bytes so far pass the limit, with or without its LF, so that the
    // answer does not depend on how the bytes were split into reads.
    size_t lf = rest.find('\n', line_scanned_);
    size_t seen = lf == std::string_view::npos ? rest.size() : lf;  // the line before its LF
    if (stage_ == Stage::kTrailers) {
      // Trailers count as a header does, their blank last line aside: a line that is not (or
      // cannot become) that blank line counts up to and including its LF.
      bool blank = seen == 0 || (seen == 1 && rest[0] == '\r');
      if (!blank && scanned_ + seen + 1 > limits_.max_header_bytes) {
        return Fail(431, "chunked trailers too large");
      }
    } else if (seen > kMaxChunkLine + 1) {  // the size, its extensions and a CR
      return Fail(400, "malformed chunk size");
    }
    if (lf == std::string_view::npos) {
      line_scanned_ = rest.size();
      break;
    }
    line_scanned_ = 0;
    if (lf == 0 || rest[lf - 1] != '\r') {
      return Fail(400, "bare LF in the chunked framing: lines end in CRLF");
    }
    std::string_view line = rest.substr(0, lf - 1);
    pos += lf + 1;
    if (stage_ == Stage::kTrailers) {
      scanned_ += lf + 1;
      if (line.empty()) {
        stage_ = Stage::kDone;
        result = State::kComplete;
      }
      continue;
    }
    std::string_view hex = line.substr(0, line.find(';'));
    hex = TrimSpace(hex);
    if (hex.empty() || hex.size() > 15) return Fail(400, "malformed chunk size");
    size_t size = 0;
    for (char c : hex) {
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
      if (digit < 0) return Fail(400, "malformed chunk size");
      size = size * 16 + static_cast<size_t>(digit);
    }
    if (size > limits_.max_body_bytes - request_.body.size()) {
      return Fail(413, "chunked request body over the limit of " +
                           std::to_string(limits_.max_body_bytes) + " bytes");
    }
    chunk_left_ = size;
    stage_ = size == 0 ? Stage::kTrailers : Stage::kChunkData;
  }
  buffer_.erase(0, pos);
  return result;
}

}  // namespace gpusched
