#include "gpusched/server/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/codec/k8s_decode.h"

namespace gpusched {
namespace {

// Not "application/json": cpp-httplib gzips exactly that type when the client accepts gzip, as Go
// does, and compressing megabytes of echoed Nodes would cost more than it saves on a local link.
// Go's client does not look at the response Content-Type.
constexpr char kJsonType[] = "application/json; charset=utf-8";

std::string EscapeRegex(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

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

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "no such route";
    case 405:
      return "method not allowed";
    case 413:
      return "request body too large";
    default:
      return "request failed";
  }
}

// A plain server, or an HTTPS one whose handshakes take their credentials from `tls`.
std::unique_ptr<httplib::Server> MakeServer(TlsCredentials* tls) {
  if (!tls) return std::make_unique<httplib::Server>();
  auto server =
      std::make_unique<httplib::SSLServer>([tls](SSL_CTX& ctx) { return tls->Configure(ctx); });
  if (!server->is_valid()) throw std::runtime_error("cannot set up TLS");
  return server;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct HttpServer::Impl {
  ServerOptions options;
  const ExtenderService& service;
  std::function<Readiness()> readiness;
  Metrics* metrics;
  std::unique_ptr<TlsCredentials> tls;
  std::unique_ptr<httplib::Server> owned_server;
  httplib::Server& server;
  std::atomic<bool> run_called{false};
  std::atomic<bool> run_returned{false};

  Impl(ServerOptions o, const ExtenderService& s, std::function<Readiness()> r, Metrics* m)
      : options(std::move(o)),
        service(s),
        readiness(std::move(r)),
        metrics(m),
        tls(options.tls.cert.empty()
                ? nullptr
                : std::make_unique<TlsCredentials>(options.tls, options.tls_reload_interval)),
        owned_server(MakeServer(tls.get())),
        server(*owned_server) {}

  void Record(std::string_view verb, std::string_view outcome,
              std::chrono::steady_clock::time_point start, size_t nodes) {
    if (metrics) metrics->ObserveRequest(verb, outcome, SecondsSince(start), nodes);
  }

  // Decodes the body, runs `answer`, writes the response; maps errors to 400/500.
  template <class F>
  void Serve(std::string_view verb, const httplib::Request& req, httplib::Response& res,
             F&& answer) {
    auto start = std::chrono::steady_clock::now();
    // Before the inventory is complete every answer would be wrong; an error makes
    // kube-scheduler retry the pod with backoff instead of marking it unschedulable.
    if (Readiness r = readiness(); !r.ready) {
      res.status = 503;
      res.set_content(EncodeError("gpusched is not ready: " + r.detail), kJsonType);
      Record(verb, "not_ready", start, 0);
      return;
    }
    try {
      ExtenderArgs args = DecodeExtenderArgs(req.body);
      size_t candidates = args.node_names ? args.node_names->size() : args.nodes->size();
      std::string decision;
      res.set_content(answer(args, spdlog::should_log(spdlog::level::debug) ? &decision : nullptr),
                      kJsonType);
      auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      spdlog::debug("{} pod={}/{} nodes={} took={}us {}", verb, args.pod.info.namespace_name,
                    args.pod.info.name, candidates, micros, decision);
      Record(verb, "ok", start, candidates);
    } catch (const DecodeError& e) {
      spdlog::warn("{}: rejected a malformed request from {}: {}", verb, req.remote_addr, e.what());
      res.status = 400;
      res.set_content(EncodeError(e.what()), kJsonType);
      Record(verb, "bad_request", start, 0);
    } catch (const std::exception& e) {
      spdlog::error("{}: internal error: {}", verb, e.what());
      res.status = 500;
      res.set_content(EncodeError(std::string("internal error: ") + e.what()), kJsonType);
      Record(verb, "error", start, 0);
    }
  }

  void Routes() {
    if (options.serve_verbs) VerbRoutes();
    OperationRoutes();
  }

  void VerbRoutes() {
    server.Post(
        EscapeRegex(RoutePath(options.url_prefix, options.filter_verb)),
        [this](const httplib::Request& req, httplib::Response& res) {
          Serve("filter", req, res, [this](const ExtenderArgs& args, std::string* decision) {
            ExtenderFilterResult result = service.Filter(args);
            if (decision) {
              size_t passed =
                  result.node_names ? result.node_names->size() : result.nodes_raw->size();
              *decision =
                  "passed=" + std::to_string(passed) + " rejected=[" + CountReasons(result) + "]";
            }
            return EncodeExtenderFilterResult(result);
          });
        });
    server.Post(EscapeRegex(RoutePath(options.url_prefix, options.prioritize_verb)),
                [this](const httplib::Request& req, httplib::Response& res) {
                  Serve("prioritize", req, res,
                        [this](const ExtenderArgs& args, std::string* decision) {
                          HostPriorityList list = service.Prioritize(args);
                          if (decision) *decision = "top=" + TopHosts(list);
                          return EncodeHostPriorityList(list);
                        });
                });
  }

  void OperationRoutes() {
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      Readiness r = readiness();
      res.status = r.ready ? 200 : 503;
      res.set_content((r.ready ? "ok: " : "not ready: ") + r.detail + "\n", "text/plain");
    });
    if (metrics) {
      server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics->Scrape(), "text/plain; version=0.0.4; charset=utf-8");
      });
    }
    // Errors raised before a handler runs (unknown route, oversized or malformed HTTP) get the
    // same JSON shape. An oversized body is a bad request for the scheduler's log, not a 413.
    server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413) {
        // cpp-httplib caps form-encoded bodies (curl's default type) at 8 KiB whatever the limit.
        bool form = req.get_header_value("Content-Type") == "application/x-www-form-urlencoded";
        std::string message = form ? "form-encoded request body too large: send Content-Type: "
                                     "application/json"
                                   : "request body larger than the server's limit";
        spdlog::warn("rejected a request to {} from {}: {}", req.path, req.remote_addr, message);
        res.status = 400;
        res.set_content(EncodeError(message), kJsonType);
        return;
      }
      res.set_content(EncodeError(ReasonPhrase(res.status)), kJsonType);
    });
  }
};

HttpServer::HttpServer(ServerOptions options, const ExtenderService& service,
                       std::function<Readiness()> readiness, Metrics* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), service, std::move(readiness), metrics)) {
  auto& s = impl_->server;
  int threads = impl_->options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_keep_alive_timeout(impl_->options.keep_alive_seconds);
  s.set_keep_alive_max_count(1000000);
  s.set_read_timeout(30, 0);
  s.set_payload_max_length(impl_->options.max_body_bytes);
  // Headers and body go out in separate writes; without this Nagle holds the body back for
  // the client's delayed ACK (about 40 ms per call).
  s.set_tcp_nodelay(true);
  impl_->Routes();
}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::Bind() {
  auto& o = impl_->options;
  int port = o.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(o.host);
    if (port < 0) throw std::runtime_error("cannot bind " + o.host);
  } else if (!impl_->server.bind_to_port(o.host, port)) {
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(port));
  }
  return port;
}

void HttpServer::Run() {
  impl_->run_called = true;
  impl_->server.listen_after_bind();
  impl_->run_returned = true;
}

void HttpServer::Stop() {
  // cpp-httplib ignores stop() until its listen loop runs; if Run() has been called but the loop
  // has not started yet, wait for it (briefly) so the stop is not lost.
  for (int i = 0;
       i < 5000 && impl_->run_called && !impl_->run_returned && !impl_->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->server.stop();
}

}  // namespace gpusched
