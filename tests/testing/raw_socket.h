// RawSocket: a TCP connection to 127.0.0.1:port that speaks raw bytes, for what HTTP client
// libraries will not send (bad framing, trickles, pipelining). Every wait is bounded by a timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched::testing {

class RawSocket {
 public:
  explicit RawSocket(int port);  // connected, TCP_NODELAY; ok() is false when it could not connect
  ~RawSocket();
  RawSocket(RawSocket&& other) noexcept;
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  void Close();
  // Sends all of `bytes`; false when the connection failed.
  bool Send(std::string_view bytes);

  struct Response {
    int status = 0;
    std::string headers;  // the status line and headers, up to the blank line
    std::string body;
  };
  // One answer, its body as long as its Content-Length says; nullopt on timeout or close.
  std::optional<Response> Read(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // One answer's head alone (a HEAD answer has no body whatever its Content-Length says); its
  // body, if any, stays unread.
  std::optional<Response> ReadHead(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // True when the server closed the connection within `timeout`; what it sent meanwhile is
  // dropped (a flood must not fill the test's memory).
  bool ClosedWithin(std::chrono::milliseconds timeout);
  // Bytes received and not yet taken by Read.
  const std::string& pending() const { return buffer_; }

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline);
  std::optional<Response> ReadAnswer(bool with_body, std::chrono::milliseconds timeout);

  int fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
};

}  // namespace gpusched::testing
