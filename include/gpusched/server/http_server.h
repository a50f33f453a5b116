// HttpServer: the extender's HTTP/1.1 endpoint: its routes (HttpRoutes: the verbs, probes,
// /metrics, error mapping) served over our transport (HttpTransport: connections on one epoll set,
// deadlines, limits, TLS). ServerOptions is the settings of both, each declared once, in
// RouteOptions and TransportOptions.
//
// Connections cost a file descriptor and a small buffer, not a thread: `threads` threads wait on
// one epoll set and each turn serves one ready connection for at most one request, so idle, slow
// or lying clients cannot hold a worker, and busy keep-alive clients are served in turn. A request
// (TLS handshake included) must arrive whole within `request_timeout` of its first byte; idle
// keep-alive connections are closed after `keep_alive`, and beyond `max_connections` the
// longest-idle ones are closed first. The bytes of all requests held at once (headers and bodies,
// a Content-Length body in full from its header on) stay within `max_inflight_bytes`: a request
// that would pass it is answered 503 and its connection closed, counted in the metrics.
//
// Besides the routes' answers: 408 for a request that did not arrive in time, 413 for a body over
// `limits.max_body_bytes` (counted after dechunking; read no further), 415 for a compressed body,
// 431 for oversized headers, each a one-line JSON body; a request the server could not parse
// closes its connection. With TLS files the server speaks HTTPS only (HTTP/1.1, no ALPN h2),
// reloads the certificate when the files change, and with a client CA refuses every client
// without a certificate signed by it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gpusched/cluster/readiness.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/server/http_routes.h"
#include "gpusched/server/http_transport.h"

namespace gpusched {

struct ServerOptions : TransportOptions, RouteOptions {};

class HttpServer {
 public:
  // Borrows `service` and `metrics` (may be null). Throws InputError when the TLS files cannot be
  // loaded.
  HttpServer(ServerOptions options, const ExtenderService& service,
             std::function<Readiness()> readiness, Metrics* metrics = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves GET and HEAD on `path` with `handler`, on this listener only (the app adds /capacity
  // to the ops listener). Call before Bind(); `handler` runs on request threads, so it must be
  // cheap (serve a cached result) and thread-safe.
  void AddGetRoute(std::string path, std::function<HttpResponse()> handler);
  // Serves POST on `path` with `handler` on this listener only (the app's admission webhook).
  void AddPostRoute(std::string path, HttpRoutes::PostHandler handler);
  // Binds the listening socket; returns the port. Throws InputError on failure.
  int Bind();
  // Serves until Stop(); call after Bind(). Returns at once when Stop() came first.
  void Run();
  // Makes Run() return; safe from any thread and from signal-handling threads.
  void Stop();
  // Open connections right now (for tests and the attack suite).
  size_t connection_count() const;

 private:
  HttpRoutes routes_;
  HttpTransport transport_;
};

}  // namespace gpusched
