// HttpServer: the extender's HTTP/1.1 endpoint. POST <prefix>/<filterVerb> and
// <prefix>/<prioritizeVerb> decode the request, ask the ExtenderService and write the answer;
// GET /healthz and /readyz report liveness and readiness; GET /metrics serves the Prometheus
// exposition when a Metrics is given; HEAD on those three answers as GET without the body. With
// `serve_verbs` false only those three are served: the
// plain-HTTP operations listener next to a mutual-TLS verb listener, for probes and Prometheus.
// With TLS files the server speaks HTTPS only (HTTP/1.1, no ALPN h2), reloads the certificate when
// the files change, and with a client CA refuses every client without a certificate signed by it.
//
// Connections cost a file descriptor and a small buffer, not a thread: `threads` threads wait on
// one epoll set and each turn serves one ready connection for at most one request, so idle, slow
// or lying clients cannot hold a worker, and busy keep-alive clients are served in turn. A request
// (TLS handshake included) must arrive whole within `request_timeout` of its first byte; idle
// keep-alive connections are closed after `keep_alive_seconds` (longer than the 90 s kube-
// scheduler's Go client keeps them, so the server never races a client's reuse), and beyond
// `max_connections` the longest-idle ones are closed first. The bytes of all requests held at once
// (headers and bodies, a Content-Length body in full from its header on) stay within
// `max_inflight_body_bytes`: a request that would pass it is answered 503 and its connection
// closed, counted in the metrics; `max_body_bytes` is lowered to it.
//
// Every failure answers with a one-line JSON body {"error":"..."}: 400 for a malformed request,
// 404 for unknown routes, 405 (with Allow) for a wrong method, 408 for a request that did not
// arrive in time, 413 for a body over `max_body_bytes` (counted after dechunking; read no
// further), 415 for a compressed body, 431 for oversized headers, 503 while the inventory is not
// ready (kube-scheduler then retries the pod; logged, the first at once and then at most one line
// a second with the count since the last) or while requests in flight hold the budget, 500 for a
// bug. A request the server could not
// parse closes its connection. `readiness` is called on every verb request and must be cheap.
// "No node fits" is a 200 with FailedNodes.
#ifndef GPUSCHED_SERVER_HTTP_SERVER_H_
#define GPUSCHED_SERVER_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "gpusched/cluster/readiness.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/server/http_transport.h"
#include "gpusched/server/tls_credentials.h"

namespace gpusched {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8888;         // 0: pick a free port
  std::string url_prefix;  // e.g. "/gpu-extender"; routes are <prefix>/<verb>
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  size_t max_body_bytes = 64 << 20;
  size_t max_inflight_body_bytes = 256 << 20;  // all connections together, headers included
  size_t max_header_bytes = 32 << 10;
  size_t max_headers = 64;
  int threads = 8;
  int keep_alive_seconds = 150;
  std::chrono::milliseconds request_timeout{10000};
  // A filter call that arrives while the inventory is starting waits up to this for it, instead
  // of failing its pod: kube-scheduler 1.26 parks a pod whose extender call failed until the next
  // cluster event or its periodic flush (docs/reliability.md, "Outage and recovery").
  std::chrono::milliseconds not_ready_wait{1000};
  size_t max_connections = 10000;  // lowered to what RLIMIT_NOFILE allows
  bool serve_verbs = true;
  TlsFiles tls;  // empty cert: plain HTTP
  std::chrono::milliseconds tls_reload_interval{10000};
};

class HttpServer {
 public:
  // Borrows `service` and `metrics` (may be null). Throws std::runtime_error when the TLS files
  // cannot be loaded.
  HttpServer(ServerOptions options, const ExtenderService& service,
             std::function<Readiness()> readiness, Metrics* metrics = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves GET and HEAD on `path` with `handler`, on this listener only (the app adds /capacity
  // to the ops listener). Call before Bind(); `handler` runs on request threads, so it must be
  // cheap (serve a cached result) and thread-safe.
  void AddGetRoute(std::string path, std::function<HttpResponse()> handler);
  // Binds the listening socket; returns the port. Throws std::runtime_error on failure.
  int Bind();
  // Serves until Stop(); call after Bind(). Returns at once when Stop() came first.
  void Run();
  // Makes Run() return; safe from any thread and from signal-handling threads.
  void Stop();
  // Open connections right now (for tests and the attack suite).
  size_t connection_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SERVER_HTTP_SERVER_H_
