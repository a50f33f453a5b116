// latency_bench: the extender's request path at 1,000 to 15,000 nodes.
//
//   build/bench/latency_bench [--sizes 1000,5000,15000] [--occupancy 0.5,0.9] [--pairs 200]
//                             [--paths http,handler,baseline] [--modes names,nodes]
//                             [--usage repeating,distinct] [--gpus device-plugin,dra]
//                             [--hold 0] [--request-timeout 10]
//   build/bench/latency_bench_beast ... --paths http,beast   (built on demand, with Boost.Beast)
//
// For each cluster size and GPU occupancy (50%, 90%) it serves a synthetic cluster from an
// in-process HttpServer on 127.0.0.1 and drives filter + prioritize pairs over one keep-alive
// connection, as kube-scheduler does, in both nodeCacheCapable modes: every node name, or the
// full Node objects of the candidates kube-scheduler would send (its numFeasibleNodesToFind).
// Reported: p50, p99 and max of the pair's round trip (and, for the lean client, of each call of
// the pair alone), and pairs per second, with two clients:
// cpp-httplib's (which parses headers and copies bodies as a general client does) and a lean
// one that only writes the request bytes and reads the answer's bytes, so its round trip is the
// server's time plus the loopback transfer: the server-side figure.
// With `beast` (latency_bench_beast only) the same routes object is also served by Boost.Beast
// (bench/beast_server.h) and the lean client's pairs alternate between the two servers in four
// rounds, so both see the same machine. With --hold N, N idle connections, 64 sending headers
// slowly and 16 announcing a body they never send (attack_test's scenario) are held open on the
// server measured while it is measured; a table then gives, per server, the threads and
// descriptors they cost and how many of the slow ones it closed --request-timeout seconds later.
// With --gpus dra the same cluster's whole-GPU nodes publish their GPUs as DRA devices and every
// pod holds a ResourceClaim (bench/workload.h); the request's pod asks through a pending claim,
// which gpusched turns into the same 1-GPU demand (dra/dra_claims.h) on every call.
// Then, in the same run, the handler alone (decode, engine, encode; no HTTP) with the production
// codec and with the straightforward nlohmann DOM codec, and their ratio.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "baseline_codec.h"
#include "gpusched/app/command_line.h"
#include "gpusched/app/process_setup.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/flags.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "gpusched/util/text.h"
#include "testing/raw_socket.h"
#include "workload.h"
#ifdef GPUSCHED_WITH_BEAST
#include "beast_server.h"
#endif

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
  bool http = true, handler = true, baseline = true, beast = false;
  bool names = true, nodes = true;
  int hold = 0;  // idle connections held during the lean client's pairs
  std::chrono::seconds request_timeout{10};
  PolicySpec policy = DefaultPolicySpec();  // the served policy (--policy)
};

// Entries of a /proc/self directory: the process's threads (task) or descriptors (fd).
size_t CountEntries(const char* dir) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// attack_test's idle, slow and lying connections against one server.
struct HeldConnections {
  std::vector<testing::RawSocket> idle, slow;  // slow: slow headers, then bodies never sent
  HeldConnections(int port, int idle_count) {
    if (idle_count <= 0) return;
    for (int i = 0; i < idle_count; ++i) idle.emplace_back(port);
    for (int i = 0; i < 64; ++i) {
      slow.emplace_back(port);
      slow.back().Send("POST /filter HTTP/1.1\r\nHost: x\r\n");
    }
    for (int i = 0; i < 16; ++i) {
      slow.emplace_back(port);
      slow.back().Send(
          "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{\"Pod\":");
    }
  }
  size_t size() const { return idle.size() + slow.size(); }
  // Of the slow and lying ones, how many the server has closed; waits up to `wait` in all.
  int SlowClosed(std::chrono::milliseconds wait) {
    auto deadline = Clock::now() + wait;
    int closed = 0;
    for (auto& c : slow) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (c.ClosedWithin(std::max(left, std::chrono::milliseconds(1)))) ++closed;
    }
    return closed;
  }
};

// What holding connections cost one server: filled in while they are held.
struct HoldReport {
  const char* server;
  size_t held = 0, open_connections = 0;
  long threads_added = 0, descriptors_added = 0;
  Stats pairs{};
  int slow_closed = 0;
  size_t slow = 0;
};

// A pair's round trip, and each of its two calls alone: in the README registration a pod costs
// kube-scheduler one of them (a GPU pod the filter, a pod without GPUs the prioritize).
struct PairStats {
  Stats pair, filter, prioritize;
};

// Times filter + prioritize pairs from a lean client against each of `ports` in turn, over
// `rounds` rounds, so that two servers see the same machine; one PairStats per port.
std::vector<PairStats> MeasureAlternating(const std::vector<int>& ports, int pairs,
                                          const std::string& filter,
                                          const std::string& prioritize) {
  constexpr int kRounds = 4;
  std::vector<std::unique_ptr<LeanClient>> clients;
  for (int port : ports) clients.push_back(std::make_unique<LeanClient>(port));
  struct Times {
    std::vector<double> pair, filter, prioritize;
    double seconds = 0;
  };
  std::vector<Times> times(ports.size());
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < ports.size(); ++i) {
      Times& t = times[i];
      auto once = [&] {
        auto t0 = Clock::now();
        if (clients[i]->Post("/filter", filter) != 200) std::abort();
        auto t1 = Clock::now();
        if (clients[i]->Post("/prioritize", prioritize) != 200) std::abort();
        t.filter.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        t.prioritize.push_back(ms_since(t1));
        t.pair.push_back(ms_since(t0));
      };
      if (round == 0) {
        for (int k = 0; k < std::max(3, pairs / 10); ++k) once();  // warm up
        t = Times{};
      }
      auto start = Clock::now();
      for (int k = 0; k < std::max(1, pairs / kRounds); ++k) once();
      t.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  std::vector<PairStats> out;
  for (const Times& t : times) {
    out.push_back({Summarize(t.pair, t.seconds), Summarize(t.filter, t.seconds),
                   Summarize(t.prioritize, t.seconds)});
  }
  return out;
}

void Run(int size, double occupancy, bench::NodeUsage usage, bench::GpuSource gpus, int pairs,
         const Selection& only, std::vector<HoldReport>& holds) {
  bench::Workload w = bench::MakeWorkload(size, occupancy, 42, usage, gpus);
  std::printf(
      "| (%d nodes, %.0f%% occupancy, %s usage, %s: %zu content classes) | | | | | | | | |\n", size,
      occupancy * 100, usage == bench::NodeUsage::kDistinct ? "distinct" : "repeating",
      gpus == bench::GpuSource::kDra ? "DRA claims" : "device plugin", w.snapshot->class_count());
  // Metrics on, as `gpusched serve` runs (request counters, latency histograms, rejections).
  ServerOptions server_options;
  server_options.request_timeout = only.request_timeout;
  auto app = bench::MakeServerApp(w, only.policy, true, server_options);
  const ExtenderService& service = app->service();
  int port = app->Bind();
  std::thread serving([&] { app->Run(); });
  std::vector<int> ports = {port};
#ifdef GPUSCHED_WITH_BEAST
  // The same routes as the app's server (a second HttpRoutes over the same service, readiness
  // and metrics), over Boost.Beast.
  HttpRoutes beast_routes(
      server_options, service, [&] { return app->inventory().readiness(); }, &app->metrics());
  std::unique_ptr<bench::BeastServer> beast;
  std::thread beast_serving;
  if (only.beast) {
    TransportOptions beast_options = server_options;
    beast_options.port = 0;
    beast = std::make_unique<bench::BeastServer>(beast_options, beast_routes);
    ports.push_back(beast->Bind());
    beast_serving = std::thread([&] { beast->Run(); });
  }
#endif

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
    for (size_t i = 1; i < ports.size(); ++i) {  // every server gives the same answers
      httplib::Client other("127.0.0.1", ports[i]);
      other.set_read_timeout(60, 0);
      auto f = other.Post("/filter", *m.filter, "application/json");
      auto p = other.Post("/prioritize", prioritize, "application/json");
      auto ours = client.Post("/prioritize", prioritize, "application/json");
      if (!f || !p || !ours || f->body != first->body || p->body != ours->body) {
        std::fprintf(stderr, "latency_bench: the servers' answers differ\n");
        std::abort();
      }
    }
    if (only.http) {
      Stats http = Measure(m.pairs, [&] {
        auto f = client.Post("/filter", *m.filter, "application/json");
        auto p = client.Post("/prioritize", prioritize, "application/json");
        if (!f || !p || f->status != 200 || p->status != 200) std::abort();
      });
      Row("HTTP pair, cpp-httplib client", size, occupancy, m.name, m.candidates, http);
      // Without held connections the servers alternate; with them, each is measured alone
      // while they are held on it.
      std::vector<PairStats> server_side;
      if (only.hold == 0) server_side = MeasureAlternating(ports, m.pairs, *m.filter, prioritize);
      for (size_t i = 0; only.hold > 0 && i < ports.size(); ++i) {
        HoldReport report{i == 0 ? "gpusched transport" : "Boost.Beast"};
        long threads_before = static_cast<long>(CountEntries("/proc/self/task"));
        long fds_before = static_cast<long>(CountEntries("/proc/self/fd"));
        auto hold_start = Clock::now();
        HeldConnections held(ports[i], only.hold);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        report.held = held.size();
        report.threads_added = static_cast<long>(CountEntries("/proc/self/task")) - threads_before;
        // Each held connection is two descriptors here: the client's and the server's.
        report.descriptors_added = static_cast<long>(CountEntries("/proc/self/fd")) - fds_before -
                                   static_cast<long>(held.size());
        report.open_connections = i == 0 ? app->connection_count() : 0;
#ifdef GPUSCHED_WITH_BEAST
        if (i == 1) report.open_connections = beast->connection_count();
#endif
        server_side.push_back(MeasureAlternating({ports[i]}, m.pairs, *m.filter, prioritize)[0]);
        report.pairs = server_side.back().pair;
        report.slow = held.slow.size();
        auto due = hold_start + only.request_timeout + std::chrono::seconds(1);
        report.slow_closed = held.SlowClosed(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::max(due - Clock::now(), Clock::duration(0))));
        holds.push_back(report);
        held.idle.clear();
        held.slow.clear();
        // Until the server has closed its ends, they would count against the next server.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      Row("HTTP pair, lean client (server side)", size, occupancy, m.name, m.candidates,
          server_side[0].pair);
      Row("its filter call alone", size, occupancy, m.name, m.candidates, server_side[0].filter);
      Row("its prioritize call alone", size, occupancy, m.name, m.candidates,
          server_side[0].prioritize);
      if (server_side.size() > 1) {
        Row("HTTP pair, lean client, Boost.Beast server", size, occupancy, m.name, m.candidates,
            server_side[1].pair);
      }
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
#ifdef GPUSCHED_WITH_BEAST
  if (beast) {
    beast->Stop();
    beast_serving.join();
  }
#endif
  app->Stop();
  serving.join();
}

}  // namespace

int main(int argc, char** argv) {
  SetUpServingProcess();  // as gpusched serve does, so the figures are the server's
  FlagSet flags("latency_bench", "latency_bench [flags]", "Extender request latency at scale.");
  flags.Add({"sizes", "N,N,...", "1000,5000,15000", "cluster sizes in nodes"})
      .Add({"occupancy", "F,F", "0.5,0.9", "GPU occupancy levels"})
      .Add({"gpus", "LIST", "device-plugin",
            "how GPUs are offered and asked for: device-plugin (nvidia.com/gpu), dra (the "
            "whole-GPU nodes' GPUs as ResourceSlices, every pod a ResourceClaim)"})
      .Add({"usage", "LIST", "repeating",
            "node usage: repeating (nodes of equal use share a content class, as in most "
            "clusters) and/or distinct (one CPU-only pod of a unique size per node: every node "
            "its own class)"})
      .Add({"pairs", "N", "200", "filter+prioritize pairs per NodeNames measurement"})
      .Add({"paths", "LIST", "http,handler,baseline",
            "measurements: http (round trip), handler (in-process), baseline (nlohmann DOM; "
            "needs handler), beast (the lean client's pairs also against Boost.Beast; needs "
            "http, and latency_bench_beast)"})
      .Add({"modes", "LIST", "names,nodes", "nodeCacheCapable modes: names (true), nodes (false)"})
      .Add({"hold", "N", "0",
            "idle connections held (with 64 slow-header and 16 lying-body ones) on each server "
            "while its lean pairs are measured"})
      .Add({"request-timeout", "SECONDS", "10",
            "both servers' --request-timeout; with --hold, the slow connections are checked "
            "for closing a second after it"})
      .Add({"policy", "FILE", "",
            "serve this policy file (as gpusched serve --policy); default: the built-in one"});
  if (Problems problems = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
      !problems.empty()) {
    std::fprintf(stderr, "latency_bench: %s\n", problems.lines()[0].c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::printf("%s", flags.Help().c_str());
    return 0;
  }
  Selection only{false, false, false, false, false, false};
  for (const auto& p : SplitList(flags.Get("paths"))) {
    bool* flag = p == "http"       ? &only.http
                 : p == "handler"  ? &only.handler
                 : p == "baseline" ? &only.baseline
                 : p == "beast"    ? &only.beast
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
#ifndef GPUSCHED_WITH_BEAST
  if (only.beast) {
    std::fprintf(stderr,
                 "latency_bench: --paths beast: this build has no Boost.Beast; build and run "
                 "latency_bench_beast (ninja -C build latency_bench_beast)\n");
    return 2;
  }
#endif
  auto hold = ParseWholeNumber(flags.Get("hold"), 0, 100000);
  auto request_timeout = ParseWholeNumber(flags.Get("request-timeout"), 1, 3600);
  if (!hold || !request_timeout) {
    std::fprintf(stderr, "latency_bench: --hold and --request-timeout take whole numbers\n");
    return 2;
  }
  auto policy = PolicyFromFlag(flags.Get("policy"));  // as gpusched serve --policy reads it
  if (!policy.ok()) return Fail(policy.problems);
  only.policy = policy.value->spec();
  only.hold = static_cast<int>(*hold);
  only.request_timeout = std::chrono::seconds(*request_timeout);
  if (only.hold > 0) {  // the held connections' two ends are both in this process
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  std::vector<bench::NodeUsage> usages;
  for (const auto& u : SplitList(flags.Get("usage"))) {
    if (u != "repeating" && u != "distinct") {
      std::fprintf(stderr, "latency_bench: --usage: unknown usage \"%s\"\n", u.c_str());
      return 2;
    }
    usages.push_back(u == "distinct" ? bench::NodeUsage::kDistinct : bench::NodeUsage::kRepeating);
  }
  std::vector<bench::GpuSource> sources;
  for (const auto& g : SplitList(flags.Get("gpus"))) {
    if (g != "device-plugin" && g != "dra") {
      std::fprintf(stderr, "latency_bench: --gpus: unknown source \"%s\"\n", g.c_str());
      return 2;
    }
    sources.push_back(g == "dra" ? bench::GpuSource::kDra : bench::GpuSource::kDevicePlugin);
  }
  spdlog::set_level(spdlog::level::warn);
  std::printf(
      "| path | nodes | GPU occupancy | mode | nodes per request | p50 ms | p99 ms | max ms | "
      "pairs/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<HoldReport> holds;
  for (const auto& size : SplitList(flags.Get("sizes"))) {
    for (const auto& occ : SplitList(flags.Get("occupancy"))) {
      for (auto usage : usages) {
        for (auto gpus : sources) {
          Run(std::stoi(size), std::stod(occ), usage, gpus, std::stoi(flags.Get("pairs")), only,
              holds);
        }
      }
      std::fflush(stdout);
    }
  }
  if (holds.empty()) return 0;
  std::printf(
      "\n| server, connections held | open connections | threads added | descriptors added | "
      "lean pair p50 ms | p99 ms | max ms | slow or lying closed %llds after |\n",
      static_cast<long long>(only.request_timeout.count()) + 1);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto& h : holds) {
    std::printf("| %s, %zu | %zu | %ld | %ld | %.3f | %.3f | %.3f | %d of %zu |\n", h.server,
                h.held, h.open_connections, h.threads_added, h.descriptors_added, h.pairs.p50_ms,
                h.pairs.p99_ms, h.pairs.max_ms, h.slow_closed, h.slow);
  }
  return 0;
}
