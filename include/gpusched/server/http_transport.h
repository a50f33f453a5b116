// HttpTransport: HTTP/1.1 over TCP (optionally TLS) for a request handler, on an epoll set shared
// by a few threads.
//
// A connection holds a file descriptor and its buffers, never a thread: each thread takes one
// ready connection at a time (EPOLLONESHOT) and serves at most one of its requests per turn, so
// idle, slow and lying clients cost no worker and keep-alive clients are served in turn. Every
// request, TLS handshake included, must arrive whole within `request_timeout` of its first byte
// (else 408, then close), and an answer must be taken by the client within the same time. Idle
// keep-alive connections close after `keep_alive`; when `max_connections` are open, the
// longest-idle one is closed for a newcomer, and without an idle one the newcomer is refused.
// Requests that fail to parse (see HttpRequestParser) are answered by `failure` and their
// connection is closed; so is a request that would take the bytes held by all requests past
// `max_inflight_bytes` (503, see RequestBudget). A HEAD request gets the head of the handler's
// answer without its body; an HTTP/1.0 client asking for keep-alive is told `Connection:
// keep-alive` when the connection stays open. Connection bookkeeping is guarded by one mutex, held
// only for table updates and epoll re-arming, never for I/O or handlers.
#ifndef GPUSCHED_SERVER_HTTP_TRANSPORT_H_
#define GPUSCHED_SERVER_HTTP_TRANSPORT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <openssl/ssl.h>

#include "gpusched/server/http_request_parser.h"

namespace gpusched {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::string allow;  // the Allow header of a 405
  // Close the connection after this answer: a client that sent a request the handler could not
  // read may have framed the next ones just as badly, so nothing after it is trusted.
  bool close = false;
};

struct HttpHandlers {
  // Answers a complete request; may throw nothing (catch inside).
  std::function<HttpResponse(HttpRequest& request, std::string_view peer)> request;
  // Answers a request that could not be read: status 4xx/5xx and a one-line reason.
  std::function<HttpResponse(int status, const std::string& reason, std::string_view peer)> failure;
};

struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: pick a free port
  int threads = 8;
  HttpLimits limits;
  // Bytes of request headers and bodies held at once by all connections (see RequestBudget).
  size_t max_inflight_bytes = 256 << 20;
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds keep_alive{150000};
  size_t max_connections = 10000;
  SSL_CTX* tls = nullptr;  // borrowed; null: plain HTTP
};

// Request bodies and their decoded forms can be tens of MB. After a large request the transport
// asks the allocator to give free memory back (malloc_trim), but glibc gives back only the main
// heap's top and free blocks inside heaps; the tops of its per-thread heaps stay resident. This
// puts every thread on the main heap, so a burst of large requests does not stay resident after
// it is answered. (Mapping large blocks on their own instead costs a TLB shootdown per unmap in a
// multi-threaded process: 5-7x slower full-Nodes requests on a 2-vCPU VM.) Process-wide; call once
// at start, before other threads allocate.
void UseOneAllocatorArena();

class HttpTransport {
 public:
  HttpTransport(TransportOptions options, HttpHandlers handlers);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds and listens; returns the port. Throws std::runtime_error on failure.
  int Bind();
  // Serves on `threads` threads (the caller's among them) until Stop().
  void Run();
  // Makes Run() return; safe from any thread, before or during Run().
  void Stop();
  size_t connection_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SERVER_HTTP_TRANSPORT_H_
