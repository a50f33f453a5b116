// BeastServer: the extender's routes (HttpRoutes, what HttpServer serves over our transport) over
// Boost.Beast's HTTP/1.1 server, to measure the two transports in one latency_bench run
// (latency_bench_beast; docs/architecture.md, "Transport: why our own"). Not part of gpusched.
//
// Plain HTTP only; as Beast's examples serve: one io_context run by `threads` threads, one
// asynchronous session per connection (no thread held by an idle or slow client). Taken from
// TransportOptions: host, port, threads, limits.max_header_bytes (Beast's header_limit, which
// counts the request line too) and limits.max_body_bytes (body_limit, after dechunking),
// request_timeout (from the request's first byte to its last, and again for the answer to be
// taken: Beast's tcp_stream deadline, which closes the socket, so no 408 is sent) and keep_alive
// (an idle connection's wait for a first byte). Not enforced, as Beast has no counterpart:
// max_headers, max_inflight_bytes (the request budget across connections) and max_connections.
// HEAD gets the head of the GET answer; `Expect: 100-continue` is not answered.
#pragma once

#include <cstddef>
#include <memory>

#include "gpusched/server/http_routes.h"
#include "gpusched/server/http_transport.h"

namespace gpusched::bench {

class BeastServer {
 public:
  // Borrows `routes`, which must outlive the server.
  BeastServer(TransportOptions options, HttpRoutes& routes);
  ~BeastServer();
  BeastServer(const BeastServer&) = delete;
  BeastServer& operator=(const BeastServer&) = delete;

  // Binds and listens; returns the port. Throws on failure.
  int Bind();
  // Serves on `threads` threads (the caller's among them) until Stop().
  void Run();
  // Makes Run() return; safe from any thread.
  void Stop();
  // Connections open now.
  size_t connection_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::bench
