// HttpRoutes: what the extender answers to one HTTP request, whatever carries it. POST
// <prefix>/<filterVerb> and <prefix>/<prioritizeVerb> decode the request, ask the ExtenderService
// and encode the answer; GET /healthz and /readyz report liveness and readiness; GET /metrics
// serves the Prometheus exposition when a Metrics is given; HEAD on those three answers as GET (the
// transport drops the body). With `serve_verbs` false only those three are served (and the routes
// added with AddGetRoute): the plain-HTTP operations listener next to a mutual-TLS verb listener.
//
// Every failure answers with a one-line JSON body {"error":"..."}: 400 for a malformed request
// (and the connection is to be closed), 404 for unknown routes, 405 (with Allow) for a wrong
// method, 503 while the inventory is not ready (kube-scheduler then retries the pod; logged, the
// first at once and then at most one line a second with the count since the last), 500 for a bug.
// Failure() words what the transport could not read (4xx, 503 for the request budget, counted in
// the metrics), and replaces an answer the transport cannot hold with a 503 (counted). "No node
// fits" is a 200 with FailedNodes. `readiness` is called on every verb
// request and must be cheap. One debug line per decision.
//
// HttpServer (http_server.h) serves these routes over our transport; bench/beast_server.h serves
// them over Boost.Beast, to compare the two. Thread-safe once the routes are added.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/cluster/readiness.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/server/http_transport.h"

namespace gpusched {

struct RouteOptions {
  std::string url_prefix;  // e.g. "/gpu-extender"; routes are <prefix>/<verb>
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  // A filter call that arrives while the inventory is starting waits up to this for it, instead
  // of failing its pod: kube-scheduler 1.26 parks a pod whose extender call failed until the next
  // cluster event or its periodic flush (docs/reliability.md, "Outage and recovery").
  std::chrono::milliseconds not_ready_wait{1000};
  bool serve_verbs = true;
  // GETs of /metrics and of the added routes being answered at once, at most; past it they get
  // a 503 at once, so that however many scrapers or report readers come, threads stay free for
  // /healthz and /readyz (the listener's threads minus this). 0: no limit.
  size_t max_concurrent_reports = 0;
};

class HttpRoutes {
 public:
  // Borrows `service` and `metrics` (may be null).
  HttpRoutes(RouteOptions options, const ExtenderService& service,
             std::function<Readiness()> readiness, Metrics* metrics = nullptr);
  ~HttpRoutes();
  HttpRoutes(const HttpRoutes&) = delete;
  HttpRoutes& operator=(const HttpRoutes&) = delete;

  // Serves GET and HEAD on `path` with `handler`. Call before serving; `handler` runs on request
  // threads, so it must be cheap (serve a cached result) and thread-safe.
  void AddGetRoute(std::string path, std::function<HttpResponse()> handler);
  // Serves POST on `path` with `handler`, which takes the body (the webhook listener's review).
  // Call before serving; `handler` runs on request threads and must be thread-safe.
  using PostHandler = std::function<HttpResponse(std::string&& body, std::string_view peer)>;
  void AddPostRoute(std::string path, PostHandler handler);
  // The answer to a complete request (its body is taken).
  HttpResponse Answer(HttpRequest& request, std::string_view peer);
  // The answer to a request the transport could not read: `status` and a one-line reason.
  HttpResponse Failure(int status, const std::string& reason);
  // Both, for a transport.
  HttpHandlers handlers();
  // Ends the readiness waits of requests under way; call when the server stops.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched
