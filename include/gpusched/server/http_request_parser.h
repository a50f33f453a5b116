// HttpRequestParser: one HTTP/1.1 request read from bytes as they arrive, within fixed limits.
//
// Feed() takes whatever the socket delivered; the parser keeps at most one request's header and
// body, so memory follows the bytes actually received and the limits, never a number inside the
// input (a Content-Length of 2^64 reserves nothing). Bodies come with Content-Length or chunked
// transfer coding; what kube-scheduler never sends is refused: a Content-Encoding (415), another
// transfer coding (501), both framings at once (400). A body over `max_body_bytes` after
// dechunking is 413 and is read no further. Lines end in CRLF: a bare LF or CR in the header or
// the chunked framing is 400 at once (it never completes a header we would wait for). HTTP/1.1
// requires exactly one Host header, HTTP/1.0 at most one: otherwise 400. Once a request fails the
// parser stays failed: the connection is answered and closed, never read on as further requests.
// Bytes after a complete request (pipelining) are kept for the next one: Reset() starts it.
// The answer (each request, the error, and the Feed that reports it: the one bringing the byte
// that decides it) depends only on the bytes, never on how they were split into Feed calls; the
// fuzz target http_request checks this (tests/fuzz/fuzz_checks.h).
//
// Parsers given a RequestBudget hold in it every byte they keep past its first kFreeBytes (header
// and body as received, and a body announced by Content-Length in full as soon as its header is
// read, before any of it is read), so all connections together stay within one memory bound; a
// request that would pass it fails with 503. Each parser is not thread-safe; the budget is.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched {

struct HttpLimits {
  size_t max_header_bytes = 32 << 10;  // request line + headers (+ chunked trailers)
  size_t max_headers = 64;
  size_t max_body_bytes = 64 << 20;  // after dechunking
};

// The bytes all requests in flight may hold together, past the first kFreeBytes of each: those
// are never charged, so probes and requests of a few KB never wait on the budget (memory is
// bounded by the limit plus kFreeBytes per open connection). A request holding more than
// kSmallRequestBytes may not take the last eighth of the budget: that part stays for probes and
// small requests (kube-scheduler's NodeNames calls), so that large bodies alone cannot shut them
// out. The reserve shrinks where needed for one body of `max_body_bytes` to fit an otherwise idle
// budget. Lock-free and thread-safe.
class RequestBudget {
 public:
  static constexpr size_t kFreeBytes = 4 << 10;
  static constexpr size_t kSmallRequestBytes = 1 << 20;

  explicit RequestBudget(size_t limit, size_t max_body_bytes = 0)
      : limit_(limit),
        large_limit_(limit - std::min(limit / 8, limit - std::min(max_body_bytes, limit))) {}
  RequestBudget(const RequestBudget&) = delete;
  RequestBudget& operator=(const RequestBudget&) = delete;

  // Takes `more` bytes for a request that will then hold `total`; false (nothing taken) when that
  // would pass the limit that applies to a request of that size.
  bool Take(size_t more, size_t total);
  void Give(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t limit() const { return limit_; }
  // What the requests in flight may hold once one of them is larger than kSmallRequestBytes.
  size_t large_request_limit() const { return large_limit_; }

 private:
  const size_t limit_;
  const size_t large_limit_;
  std::atomic<size_t> used_{0};
};

struct HttpRequest {
  std::string method;
  std::string target;  // as sent, query included
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool keep_alive = true;
  bool expects_continue = false;

  // The path of `target`, without the query.
  std::string_view path() const;
  // The first header named `lower_name`, or empty.
  std::string_view header(std::string_view lower_name) const;
};

class HttpRequestParser {
 public:
  enum class State { kNeedMore, kComplete, kFailed };

  // `budget`, when given, is borrowed and must outlive the parser.
  explicit HttpRequestParser(HttpLimits limits, RequestBudget* budget = nullptr);
  ~HttpRequestParser();  // gives back what it holds of the budget
  HttpRequestParser(const HttpRequestParser&) = delete;
  HttpRequestParser& operator=(const HttpRequestParser&) = delete;

  // Appends received bytes and parses as far as they allow.
  State Feed(std::string_view bytes);
  State state() const { return state_; }
  // True once any byte of the current request has arrived.
  bool started() const { return !buffer_.empty() || stage_ != Stage::kHeaders; }
  // True once the header is parsed; with state kNeedMore the body is still arriving.
  bool header_complete() const { return stage_ != Stage::kHeaders; }

  // The parsed request (complete once state() is kComplete; its header once header_complete()).
  HttpRequest& request() { return request_; }
  // For kFailed: the HTTP status to answer and a one-line reason.
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }

  // Frees the complete request's body (its handler is done with it) and gives its bytes back to
  // the budget; the bytes of a pipelined next request stay held.
  void DropBody();
  // Starts the next request with the bytes received after the complete one.
  State Reset();
  // Bytes this parser holds of its budget (0 without one): what it keeps past kFreeBytes.
  size_t held() const { return held_; }

 private:
  enum class Stage {
    kHeaders,
    kLengthBody,
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kDone
  };

  State Advance();
  State Parse();
  State ParseHeader();
  State ParseLengthBody();
  State ParseChunks();
  State Fail(int status, std::string message);
  bool ParseRequestLine(std::string_view line);
  bool ApplyHeaders();
  bool CheckHost();
  // Bytes the parser keeps once `incoming` more are appended.
  size_t Needed(size_t incoming) const;
  // Makes the held part of the budget what keeping `bytes` costs; false when it cannot grow so.
  bool Hold(size_t bytes);
  State OverBudget();

  HttpLimits limits_;
  State state_ = State::kNeedMore;
  Stage stage_ = Stage::kHeaders;
  std::string buffer_;       // received, not yet consumed
  size_t scanned_ = 0;       // header bytes already searched for the blank line
  size_t line_scanned_ = 0;  // bytes of the current chunk-size or trailer line already searched
  size_t content_length_ = 0;
  size_t chunk_left_ = 0;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_;
  RequestBudget* budget_ = nullptr;
  size_t held_ = 0;
};

}  // namespace gpusched
