#include "gpusched/server/http_routes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/codec/k8s_decode.h"

namespace gpusched {
namespace {

constexpr char kJsonType[] = "application/json; charset=utf-8";
constexpr char kTextType[] = "text/plain; charset=utf-8";

std::string RoutePath(const std::string& prefix, const std::string& verb) {
  std::string p = prefix;
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (!p.empty() && p.front() != '/') p.insert(p.begin(), '/');
  return p + "/" + verb;
}

// "12x Insufficient nvidia.com/gpu, 3x node offers no nvidia.com/gpu": reasons counted, not
// listed node by node, so a decision is one line whatever the cluster size.
std::string CountReasons(const ExtenderFilterResult& r) {
  std::map<std::string_view, size_t> counts;
  for (const auto& [node, reason] : r.failed_nodes) ++counts[reason];
  for (const auto& [node, reason] : r.failed_and_unresolvable_nodes) ++counts[reason];
  std::string out;
  for (const auto& [reason, n] : counts) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + std::string(reason);
  }
  return out;
}

// The three best-scored hosts, "host:score,...".
std::string TopHosts(const HostPriorityList& list) {
  std::vector<const HostPriority*> sorted;
  for (const auto& hp : list.hosts) sorted.push_back(&hp);
  size_t n = std::min<size_t>(3, sorted.size());
  std::partial_sort(sorted.begin(), sorted.begin() + n, sorted.end(),
                    [](const auto* a, const auto* b) { return a->score > b->score; });
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.append(i ? "," : "").append(sorted[i]->host).append(":");
    out += std::to_string(sorted[i]->score);
  }
  return out;
}

HttpResponse JsonError(int status, std::string_view message) {
  return HttpResponse{status, kJsonType, EncodeError(message), ""};
}

HttpResponse Text(int status, std::string body) {
  return HttpResponse{status, kTextType, std::move(body), ""};
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Decides which of a stream of like events gets a log line: the first at once, then at most one a
// `period`, each saying how many went unlogged since the previous line. A scheduler retrying every
// pod cannot flood the log, and no event goes unseen. Thread-safe.
class LogThrottle {
 public:
  explicit LogThrottle(std::chrono::steady_clock::duration period) : period_(period) {}
  // The events unlogged since the last line when this one is to be logged; nullopt otherwise.
  std::optional<uint64_t> Admit() {
    auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    if (logged_ && now - last_ < period_) {
      ++unlogged_;
      return std::nullopt;
    }
    logged_ = true;
    last_ = now;
    return std::exchange(unlogged_, 0);
  }

 private:
  const std::chrono::steady_clock::duration period_;
  std::mutex mu_;
  bool logged_ = false;
  std::chrono::steady_clock::time_point last_;
  uint64_t unlogged_ = 0;
};

}  // namespace

struct HttpRoutes::Impl {
  RouteOptions options;
  const ExtenderService& service;
  std::function<Readiness()> readiness;
  Metrics* metrics;
  std::string filter_path;
  std::string prioritize_path;
  LogThrottle not_ready_log{std::chrono::seconds(1)};
  std::atomic<bool> stopping{false};  // ends the waits of AwaitStart
  std::map<std::string, std::function<HttpResponse()>, std::less<>> get_routes;  // before serving
  std::map<std::string, PostHandler, std::less<>> post_routes;                   // before serving
  std::atomic<size_t> reports_running{0};

  Impl(RouteOptions o, const ExtenderService& s, std::function<Readiness()> r, Metrics* m)
      : options(std::move(o)),
        service(s),
        readiness(std::move(r)),
        metrics(m),
        filter_path(RoutePath(options.url_prefix, options.filter_verb)),
        prioritize_path(RoutePath(options.url_prefix, options.prioritize_verb)) {}

  // A request the transport could not take; 503 only when the request budget is used up.
  HttpResponse Failure(int status, const std::string& reason) {
    if (status == 503 && metrics) metrics->CountRequestBudgetRejection();
    return JsonError(status, reason);
  }

  HttpResponse Dropped(const std::string& reason) {
    if (metrics) metrics->CountDroppedAnswer();
    return JsonError(503, reason);
  }

  // `build`'s answer, unless max_concurrent_reports answers of its kind are being built: then a
  // 503, so that the probes always find a thread.
  template <class Build>
  HttpResponse Report(Build&& build) {
    size_t limit = options.max_concurrent_reports;
    if (limit > 0 && reports_running.fetch_add(1) >= limit) {
      reports_running.fetch_sub(1);
      if (metrics) metrics->CountBusyReport();
      return JsonError(503, "busy: " + std::to_string(limit) +
                                " answers of /metrics or reports are being built; retry later");
    }
    struct Leave {
      std::atomic<size_t>* running;
      size_t limit;
      ~Leave() {
        if (limit > 0) running->fetch_sub(1);
      }
    } leave{&reports_running, limit};
    try {
      return build();
    } catch (const std::exception& e) {  // a last-resort barrier (a bug, bad_alloc)
      return JsonError(500, std::string("internal error: ") + e.what());
    }
  }

  void Record(std::string_view verb, std::string_view outcome,
              std::chrono::steady_clock::time_point start, size_t nodes) {
    if (metrics) metrics->ObserveRequest(verb, outcome, SecondsSince(start), nodes);
  }

  HttpResponse Handle(HttpRequest& req, std::string_view peer) {
    std::string_view path = req.path();
    if (options.serve_verbs && (path == filter_path || path == prioritize_path)) {
      if (req.method != "POST") {
        HttpResponse r = JsonError(405, "method not allowed: use POST");
        r.allow = "POST";
        return r;
      }
      if (path == filter_path) return Filter(std::move(req.body), peer);
      return Prioritize(std::move(req.body), peer);
    }
    if (path == "/healthz" || path == "/readyz" || (metrics && path == "/metrics")) {
      // HEAD is GET without the body (the transport drops it): curl -I and some probes use it.
      if (req.method != "GET" && req.method != "HEAD") {
        HttpResponse r = JsonError(405, "method not allowed: use GET or HEAD");
        r.allow = "GET, HEAD";
        return r;
      }
      if (path == "/healthz") return Text(200, "ok\n");
      if (path == "/readyz") {
        Readiness r = readiness();
        return Text(r.ready ? 200 : 503, (r.ready ? "ok: " : "not ready: ") + r.detail + "\n");
      }
      return Report([this] {
        return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics->Scrape(), ""};
      });
    }
    if (auto route = post_routes.find(path); route != post_routes.end()) {
      if (req.method != "POST") {
        HttpResponse r = JsonError(405, "method not allowed: use POST");
        r.allow = "POST";
        return r;
      }
      try {
        return route->second(std::move(req.body), peer);
      } catch (const std::exception& e) {  // a last-resort barrier: the handler answers its errors
        spdlog::error("{}: internal error: {}", path, e.what());
        return JsonError(500, std::string("internal error: ") + e.what());
      }
    }
    if (auto route = get_routes.find(path); route != get_routes.end()) {
      if (req.method != "GET" && req.method != "HEAD") {
        HttpResponse r = JsonError(405, "method not allowed: use GET or HEAD");
        r.allow = "GET, HEAD";
        return r;
      }
      return Report(route->second);
    }
    return JsonError(404, "no such route");
  }

  HttpResponse Filter(std::string&& body, std::string_view peer) {
    return Serve(
        "filter", std::move(body), peer, [this](const ExtenderArgs& args, std::string* decision) {
          ExtenderFilterResult result = service.Filter(args);
          if (decision) {
            size_t passed =
                result.node_names ? result.node_names->size() : result.nodes_raw->size();
            *decision =
                "passed=" + std::to_string(passed) + " rejected=[" + CountReasons(result) + "]";
          }
          return EncodeExtenderFilterResult(result);
        });
  }

  HttpResponse Prioritize(std::string&& body, std::string_view peer) {
    return Serve("prioritize", std::move(body), peer,
                 [this](const ExtenderArgs& args, std::string* decision) {
                   HostPriorityList list = service.Prioritize(args);
                   if (decision) *decision = "top=" + TopHosts(list);
                   return EncodeHostPriorityList(list);
                 });
  }

  // The readiness; for filter, after waiting up to not_ready_wait while the inventory is starting
  // (a restarted process lists in well under a second). A failed filter parks a GPU pod in
  // kube-scheduler; a failed prioritize only loses gpusched's ranking, and the README gives that
  // entry a timeout no longer than the wait, so prioritize never waits. Nor does anything wait
  // for a stale inventory.
  Readiness AwaitStart(std::string_view verb) {
    Readiness r = readiness();
    if (verb != "filter") return r;
    auto deadline = std::chrono::steady_clock::now() + options.not_ready_wait;
    while (!r.ready && r.starting && std::chrono::steady_clock::now() < deadline &&
           !stopping.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      r = readiness();
    }
    return r;
  }

  // Decodes the body, runs `answer`; maps errors to 400/500 and an unready inventory to 503.
  template <class F>
  HttpResponse Serve(std::string_view verb, std::string&& body, std::string_view peer, F&& answer) {
    auto start = std::chrono::steady_clock::now();
    // Before the inventory is complete every answer would be wrong; an error makes
    // kube-scheduler retry the pod instead of marking it unschedulable.
    if (Readiness r = AwaitStart(verb); !r.ready) {
      Record(verb, "not_ready", start, 0);
      if (auto unlogged = not_ready_log.Admit()) {
        std::string since = *unlogged == 0 ? ""
                                           : " (" + std::to_string(*unlogged) +
                                                 " more such answers since the last line)";
        spdlog::warn("{}: answered 503 to {}: gpusched is not ready: {}{}", verb, peer, r.detail,
                     since);
      }
      return JsonError(503, "gpusched is not ready: " + r.detail);
    }
    try {
      ExtenderArgs args = TakeAndDecodeExtenderArgs(std::move(body));
      size_t candidates = args.node_names ? args.node_names->size() : args.nodes->size();
      std::string decision;
      HttpResponse response{
          200, kJsonType,
          answer(args, spdlog::should_log(spdlog::level::debug) ? &decision : nullptr), ""};
      auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      spdlog::debug("{} pod={}/{} nodes={} took={}us {}", verb, args.pod.namespace_name,
                    args.pod.name, candidates, micros, decision);
      Record(verb, "ok", start, candidates);
      return response;
    } catch (const DecodeError& e) {
      spdlog::warn("{}: rejected a malformed request from {}: {}", verb, peer, e.what());
      Record(verb, "bad_request", start, 0);
      HttpResponse response = JsonError(400, e.what());
      response.close = true;
      return response;
    } catch (const std::exception& e) {  // a last-resort barrier (a bug, bad_alloc)
      spdlog::error("{}: internal error: {}", verb, e.what());
      Record(verb, "error", start, 0);
      return JsonError(500, std::string("internal error: ") + e.what());
    }
  }
};

HttpRoutes::HttpRoutes(RouteOptions options, const ExtenderService& service,
                       std::function<Readiness()> readiness, Metrics* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), service, std::move(readiness), metrics)) {}

HttpRoutes::~HttpRoutes() = default;

void HttpRoutes::AddGetRoute(std::string path, std::function<HttpResponse()> handler) {
  impl_->get_routes[std::move(path)] = std::move(handler);
}

void HttpRoutes::AddPostRoute(std::string path, PostHandler handler) {
  impl_->post_routes[std::move(path)] = std::move(handler);
}

HttpResponse HttpRoutes::Answer(HttpRequest& request, std::string_view peer) {
  return impl_->Handle(request, peer);
}

HttpResponse HttpRoutes::Failure(int status, const std::string& reason) {
  return impl_->Failure(status, reason);
}

HttpHandlers HttpRoutes::handlers() {
  return HttpHandlers{
      [this](HttpRequest& request, std::string_view peer) { return Answer(request, peer); },
      [this](int status, const std::string& reason, std::string_view) {
        return Failure(status, reason);
      },
      [this](const std::string& reason, std::string_view) { return impl_->Dropped(reason); }};
}

void HttpRoutes::Stop() { impl_->stopping = true; }

}  // namespace gpusched
