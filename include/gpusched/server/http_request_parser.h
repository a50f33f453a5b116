// HttpRequestParser: one HTTP/1.1 request read from bytes as they arrive, within fixed limits.
//
// Feed() takes whatever the socket delivered; the parser keeps at most one request's header and
// body, so memory follows the bytes actually received and the limits, never a number inside the
// input (a Content-Length of 2^64 reserves nothing). Bodies come with Content-Length or chunked
// transfer coding; what kube-scheduler never sends is refused: a Content-Encoding (415), another
// transfer coding (501), both framings at once (400). A body over `max_body_bytes` after
// dechunking is 413 and is read no further. Once a request fails the parser stays failed: the
// connection is answered and closed, never read on as further requests. Bytes after a complete
// request (pipelining) are kept for the next one: Reset() starts it. Not thread-safe.
#ifndef GPUSCHED_SERVER_HTTP_REQUEST_PARSER_H_
#define GPUSCHED_SERVER_HTTP_REQUEST_PARSER_H_

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

  explicit HttpRequestParser(HttpLimits limits);

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

  // Starts the next request with the bytes received after the complete one.
  State Reset();

 private:
  enum class Stage { kHeaders, kLengthBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers, kDone };

  State Parse();
  State ParseHeader();
  State ParseLengthBody();
  State ParseChunks();
  State Fail(int status, std::string message);
  bool ParseRequestLine(std::string_view line);
  bool ApplyHeaders();

  HttpLimits limits_;
  State state_ = State::kNeedMore;
  Stage stage_ = Stage::kHeaders;
  std::string buffer_;  // received, not yet consumed
  size_t scanned_ = 0;  // header bytes already searched for the blank line
  size_t content_length_ = 0;
  size_t chunk_left_ = 0;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SERVER_HTTP_REQUEST_PARSER_H_
