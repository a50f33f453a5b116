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
//
// With TLS files the transport speaks HTTPS only (TlsCredentials: reloaded when the files change).
// It makes no process-wide setting itself (app/process_setup.h makes them), but one is assumed
// with TLS: SIGPIPE ignored, because OpenSSL writes to sockets with write(), which takes no
// MSG_NOSIGNAL, so a client closing mid-answer would otherwise end the process. Plain HTTP sends
// with MSG_NOSIGNAL and needs nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/server/http_request_parser.h"
#include "gpusched/server/tls_credentials.h"

namespace gpusched {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::string allow;  // the Allow header of a 405
  // Close the connection after this answer: a client that sent a request the handler could not
  // read may have framed the next ones just as badly, so nothing after it is trusted.
  bool close = false;
  // Sent after `body`: `shared_tail` from byte `shared_from` on, a text other answers share (a
  // cached report), so answers waiting for slow readers hold one copy of it between them.
  std::shared_ptr<const std::string> shared_tail = nullptr;
  size_t shared_from = 0;

  // The bytes of the answer's body: `body`, then the shared tail.
  size_t body_size() const;
};

struct HttpHandlers {
  // Answers a complete request; may throw nothing (catch inside).
  std::function<HttpResponse(HttpRequest& request, std::string_view peer)> request;
  // Answers a request that could not be read: status 4xx/5xx and a one-line reason.
  std::function<HttpResponse(int status, const std::string& reason, std::string_view peer)> failure;
  // Replaces an answer the budget cannot hold while it waits for its reader: a 503 with a
  // one-line `reason`. Null: `failure` answers it.
  std::function<HttpResponse(const std::string& reason, std::string_view peer)> dropped;
};

// Every setting of a listener's connections; ServerOptions (http_server.h) adds the routes.
struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 8888;  // 0: pick a free port
  int threads = 8;
  // Per request. `limits.max_body_bytes` is lowered to `max_inflight_bytes`: a body the budget
  // could never hold is too large (413), not a reason to retry later (503).
  HttpLimits limits;
  // Bytes of request headers and bodies, and of answers waiting to be written (their own bytes,
  // not a shared tail), held at once by all connections (see RequestBudget). An answer the budget
  // cannot hold is replaced by a 503 (HttpHandlers::dropped) and its connection closed after it.
  size_t max_inflight_bytes = 256 << 20;
  std::chrono::milliseconds request_timeout{10000};
  // Longer than the 90 s kube-scheduler's Go client keeps idle connections, so the server never
  // races a client's reuse.
  std::chrono::seconds keep_alive{150};
  size_t max_connections = 10000;  // lowered to what RLIMIT_NOFILE allows
  TlsFiles tls;                    // empty cert: plain HTTP
  std::chrono::milliseconds tls_reload_interval{10000};
  // Called from a serving thread once no request of 4 MiB or more has been answered for a second
  // after one was. The app gives free heap back to the system here (malloc_trim): a process-wide
  // act, so the transport leaves it to the app. Null: nothing is called.
  std::function<void()> after_large_requests;
};

class HttpTransport {
 public:
  // Throws InputError (gpusched/util/input_error.h) when the TLS files cannot be loaded.
  HttpTransport(TransportOptions options, HttpHandlers handlers);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds and listens; returns the port. Throws InputError naming the address and the reason
  // (cannot resolve it, port in use) or the system call that failed.
  int Bind();
  // Serves on `threads` threads (the caller's among them) until Stop(); binds first when Bind()
  // was not called.
  void Run();
  // Makes Run() return; safe from any thread, before or during Run().
  void Stop();
  size_t connection_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched
