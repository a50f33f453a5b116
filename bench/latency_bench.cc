// latency_bench: the extender's request path at 1,000 to 15,000 nodes.
//
//   build/bench/latency_bench [--sizes 1000,5000,15000] [--occupancy 0.5,0.9] [--pairs 200]
//                             [--paths http,handler,baseline] [--modes names,nodes]
//                             [--usage repeating,distinct]
//
// For each cluster size and GPU occupancy (50%, 90%) it serves a synthetic cluster from an
// in-process HttpServer on 127.0.0.1 and drives filter + prioritize pairs over one keep-alive
// connection, as kube-scheduler does, in both nodeCacheCapable modes: every node name, or the
// full Node objects of the candidates kube-scheduler would send (its numFeasibleNodesToFind).
// Reported: p50, p99 and max of the pair's round trip, and pairs per second, with two clients:
// cpp-httplib's (which parses headers and copies bodies as a general client does) and a lean
// one that only writes the request bytes and reads the answer's bytes, so its round trip is the
// server's time plus the loopback transfer: the server-side figure.
// Then, in the same run, the handler alone (decode, engine, encode; no HTTP) with the production
// codec and with the straightforward nlohmann DOM codec, and their ratio.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "baseline_codec.h"
#include "gpusched/cli/flags.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "gpusched/server/http_transport.h"
#include "gpusched/util/text.h"
#include "workload.h"

namespace {

using namespace gpusched;
using Clock = std::chrono::steady_clock;

struct Stats {
  double p50_ms, p99_ms, max_ms, per_second;
};

Stats Summarize(std::vector<double> ms, double total_seconds) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  return {at(0.50), at(0.99), ms.back(), ms.size() / total_seconds};
}

template <class F>
Stats Measure(int iterations, F&& once) {
  for (int i = 0; i < std::max(3, iterations / 10); ++i) once();  // warm up
  std::vector<double> ms;
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    auto t0 = Clock::now();
    once();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return Summarize(ms, std::chrono::duration<double>(Clock::now() - start).count());
}

// One keep-alive HTTP/1.1 connection that sends POSTs and reads answers with Content-Length, and
// does nothing else: no header map, no body copy beyond the read buffer.
class LeanClient {
 public:
  explicit LeanClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) std::abort();
  }
  ~LeanClient() { ::close(fd_); }
  LeanClient(const LeanClient&) = delete;
  LeanClient& operator=(const LeanClient&) = delete;

  // Sends `body` to `path`; returns the answer's status code, or -1 on a broken connection.
  int Post(std::string_view path, const std::string& body) {
    request_.clear();
    request_.append("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    request_.append("Content-Type: application/json\r\nContent-Length: ");
    request_.append(std::to_string(body.size())).append("\r\n\r\n");
    if (!WriteAll(request_) || !WriteAll(body)) return -1;
    return ReadAnswer();
  }

 private:
  bool WriteAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  bool Fill() {
    char chunk[1 << 16];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  int ReadAnswer() {
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return -1;
    }
    std::string_view head(buffer_.data(), header_end);
    int status = std::atoi(buffer_.c_str() + 9);  // "HTTP/1.1 200"
    size_t at = head.find("Content-Length: ");
    if (at == std::string_view::npos) at = head.find("content-length: ");
    if (at == std::string_view::npos) return -1;
    size_t length = std::strtoul(head.data() + at + 16, nullptr, 10);
    size_t total = header_end + 4 + length;
    while (buffer_.size() < total) {
      if (!Fill()) return -1;
    }
    buffer_.erase(0, total);
    return status;
  }

  int fd_ = -1;
  std::string request_;
  std::string buffer_;
};

// The prioritize request kube-scheduler sends after filter: the same pod and the passing nodes.
std::string PrioritizeRequest(const std::string& filter_request, const std::string& filter_answer) {
  auto req = nlohmann::json::parse(filter_request);
  auto ans = nlohmann::json::parse(filter_answer);
  if (req["NodeNames"].is_array()) {
    req["NodeNames"] = ans["NodeNames"];
  } else {
    req["Nodes"] = ans["Nodes"];
  }
  return req.dump();
}

void Row(const char* what, int nodes, double occupancy, const char* mode, int candidates,
         const Stats& s) {
  std::printf("| %s | %d | %.0f%% | %s | %d | %.3f | %.3f | %.3f | %.0f |\n", what, nodes,
              occupancy * 100, mode, candidates, s.p50_ms, s.p99_ms, s.max_ms, s.per_second);
}

// Which measurements to run.
struct Selection {
  bool http = true, handler = true, baseline = true;
  bool names = true, nodes = true;
};

void Run(int size, double occupancy, bench::NodeUsage usage, int pairs, const Selection& only) {
  bench::Workload w = bench::MakeWorkload(size, occupancy, 42, usage);
  std::printf("| (%d nodes, %.0f%% occupancy, %s usage: %zu content classes) | | | | | | | | |\n",
              size, occupancy * 100,
              usage == bench::NodeUsage::kDistinct ? "distinct" : "repeating",
              w.snapshot->class_count());
  // Metrics on, as `gpusched serve` runs (request counters, latency histograms, rejections).
  auto app = bench::MakeServerApp(w);
  const ExtenderService& service = app->service();
  int port = app->Bind();
  std::thread serving([&] { app->Run(); });

  auto client_owner = std::make_unique<httplib::Client>("127.0.0.1", port);
  httplib::Client& client = *client_owner;
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(60, 0);
  struct Mode {
    const char* name;
    const std::string* filter;
    int candidates;
    int pairs;
  } modes[] = {{"NodeNames", &w.names_request, size, pairs},
               {"full Nodes", &w.nodes_request, w.full_node_candidates, std::max(20, pairs / 4)}};
  for (const auto& m : modes) {
    if (!(m.filter == &w.names_request ? only.names : only.nodes)) continue;
    auto first = client.Post("/filter", *m.filter, "application/json");
    std::string prioritize = PrioritizeRequest(*m.filter, first->body);
    if (only.http) {
      Stats http = Measure(m.pairs, [&] {
        auto f = client.Post("/filter", *m.filter, "application/json");
        auto p = client.Post("/prioritize", prioritize, "application/json");
        if (!f || !p || f->status != 200 || p->status != 200) std::abort();
      });
      Row("HTTP pair, cpp-httplib client", size, occupancy, m.name, m.candidates, http);
      LeanClient lean(port);
      Stats server_side = Measure(m.pairs, [&] {
        if (lean.Post("/filter", *m.filter) != 200) std::abort();
        if (lean.Post("/prioritize", prioritize) != 200) std::abort();
      });
      Row("HTTP pair, lean client (server side)", size, occupancy, m.name, m.candidates,
          server_side);
    }
    if (!only.handler) continue;
    Stats fast = Measure(m.pairs, [&] {
      auto a = EncodeExtenderFilterResult(service.Filter(DecodeExtenderArgs(*m.filter)));
      auto b = EncodeHostPriorityList(service.Prioritize(DecodeExtenderArgs(prioritize)));
      if (a.empty() || b.empty()) std::abort();
    });
    Row("handler, production codec", size, occupancy, m.name, m.candidates, fast);
    if (!only.baseline) continue;
    Stats slow = Measure(std::max(10, m.pairs / 4), [&] {
      auto a = baseline::EncodeExtenderFilterResult(
          service.Filter(baseline::DecodeExtenderArgs(*m.filter)));
      auto b = baseline::EncodeHostPriorityList(
          service.Prioritize(baseline::DecodeExtenderArgs(prioritize)));
      if (a.empty() || b.empty()) std::abort();
    });
    Row("handler, nlohmann DOM baseline", size, occupancy, m.name, m.candidates, slow);
    std::printf(
        "| speed-up (baseline p50 / production p50) | %d | %.0f%% | %s | %d | %.1fx | | | |\n",
        size, occupancy * 100, m.name, m.candidates, slow.p50_ms / fast.p50_ms);
  }
  client_owner.reset();  // close the keep-alive connection, or the server waits for its timeout
  app->Stop();
  serving.join();
}

}  // namespace

int main(int argc, char** argv) {
  UseOneAllocatorArena();  // as gpusched serve does, so the figures are the server's, so the
                           // figures are the server's
  FlagSet flags("latency_bench", "latency_bench [flags]", "Extender request latency at scale.");
  flags.Add({"sizes", "N,N,...", "1000,5000,15000", "cluster sizes in nodes"})
      .Add({"occupancy", "F,F", "0.5,0.9", "GPU occupancy levels"})
      .Add({"usage", "LIST", "repeating",
            "node usage: repeating (nodes of equal use share a content class, as in most "
            "clusters) and/or distinct (one CPU-only pod of a unique size per node: every node "
            "its own class)"})
      .Add({"pairs", "N", "200", "filter+prioritize pairs per NodeNames measurement"})
      .Add({"paths", "LIST", "http,handler,baseline",
            "measurements: http (round trip), handler (in-process), baseline (nlohmann DOM; "
            "needs handler)"})
      .Add({"modes", "LIST", "names,nodes", "nodeCacheCapable modes: names (true), nodes (false)"});
  if (auto error = flags.Parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "latency_bench: %s\n", error->c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::printf("%s", flags.Help().c_str());
    return 0;
  }
  Selection only{false, false, false, false, false};
  for (const auto& p : SplitList(flags.Get("paths"))) {
    bool* flag = p == "http"       ? &only.http
                 : p == "handler"  ? &only.handler
                 : p == "baseline" ? &only.baseline
                                   : nullptr;
    if (!flag) {
      std::fprintf(stderr, "latency_bench: --paths: unknown measurement \"%s\"\n", p.c_str());
      return 2;
    }
    *flag = true;
  }
  for (const auto& m : SplitList(flags.Get("modes"))) {
    bool* flag = m == "names" ? &only.names : m == "nodes" ? &only.nodes : nullptr;
    if (!flag) {
      std::fprintf(stderr, "latency_bench: --modes: unknown mode \"%s\"\n", m.c_str());
      return 2;
    }
    *flag = true;
  }
  std::vector<bench::NodeUsage> usages;
  for (const auto& u : SplitList(flags.Get("usage"))) {
    if (u != "repeating" && u != "distinct") {
      std::fprintf(stderr, "latency_bench: --usage: unknown usage \"%s\"\n", u.c_str());
      return 2;
    }
    usages.push_back(u == "distinct" ? bench::NodeUsage::kDistinct : bench::NodeUsage::kRepeating);
  }
  spdlog::set_level(spdlog::level::warn);
  std::printf(
      "| path | nodes | GPU occupancy | mode | nodes per request | p50 ms | p99 ms | max ms | "
      "pairs/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& size : SplitList(flags.Get("sizes"))) {
    for (const auto& occ : SplitList(flags.Get("occupancy"))) {
      for (auto usage : usages) {
        Run(std::stoi(size), std::stod(occ), usage, std::stoi(flags.Get("pairs")), only);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
