// The attack suite: every way issues #14 and #25 took the extender down, replayed against the
// gpusched binary serving the bundled sample cluster on 127.0.0.1 (a verb listener and an
// operations listener). After each attack the process must be alive and a valid request must get
// the same answer as before. Time bounds here are generous on purpose (a held worker thread showed
// up as 10-150 s); the measured figures are printed and recorded in docs/reliability.md.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/raw_socket.h"
#include "testing/test_support.h"

namespace gpusched::attack_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

using Socket = testing::RawSocket;

std::string Post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One request on a fresh connection.
std::optional<Socket::Response> Exchange(int port, const std::string& request,
                                         std::chrono::milliseconds timeout = 20s) {
  Socket s(port);
  if (!s.ok() || !s.Send(request)) return std::nullopt;
  return s.Read(timeout);
}

long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class Attack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The suite itself holds over a thousand sockets.
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }

  // Short, so the slow-request tests see their 408 quickly.
  virtual const char* RequestTimeout() const { return "3"; }
  // The default of --max-connections.
  virtual const char* MaxConnections() const { return "10000"; }
  // More flags, after the others (the last of a flag given wins).
  virtual std::vector<std::string> ExtraFlags() const { return {}; }
  // Whether the server's stderr goes to log_path_ (read with Log()) instead of the test's.
  virtual bool CaptureLog() const { return false; }

  void SetUp() override {
    port_ = testing::FreePort();
    ops_port_ = testing::FreePort();
    log_path_ = (std::filesystem::temp_directory_path() /
                 ("gpusched-attack-" + std::to_string(::getpid()) + ".log"))
                    .string();
    std::vector<std::string> args = {GPUSCHED_BINARY,     "serve",
                                     "--listen",          "127.0.0.1:" + std::to_string(port_),
                                     "--ops-listen",      "127.0.0.1:" + std::to_string(ops_port_),
                                     "--log-level",       "error",
                                     "--request-timeout", RequestTimeout(),
                                     "--max-body-bytes",  "64Mi",
                                     "--max-connections", MaxConnections()};
    for (auto& flag : ExtraFlags()) args.push_back(flag);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    child_ = ::fork();
    if (child_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test process
      if (CaptureLog()) {
        int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(126);
      }
      ::execv(GPUSCHED_BINARY, argv.data());
      ::_exit(127);
    }
    // A deadline for hangs, not a speed check: the sanitizer binary beside the e2e tests' control
    // planes took more than 5 s to answer on a loaded 2-core machine.
    for (int i = 0; i < 2400 && !Healthy(); ++i) std::this_thread::sleep_for(25ms);
    ASSERT_TRUE(Healthy()) << "gpusched did not start within 60 s";
    good_ = testing::Fixture("extender/filter-request-nodecache.json");
    auto first = Exchange(port_, Post("/filter", good_));
    ASSERT_TRUE(first);
    ASSERT_EQ(first->status, 200);
    good_answer_ = first->body;
  }

  void TearDown() override {
    ::kill(child_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200 && ::waitpid(child_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(25ms);
    }
    if (::waitpid(child_, &status, WNOHANG) == 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, &status, 0);
    }
    std::filesystem::remove(log_path_);
  }

  // What the server wrote to stderr so far (with CaptureLog()).
  std::string Log() const { return testing::ReadFile(log_path_); }

  bool Healthy() {
    auto r = Exchange(ops_port_, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 2s);
    return r && r->status == 200;
  }
  bool Alive() { return ::waitpid(child_, nullptr, WNOHANG) == 0; }

  // The process lives and answers the good request as it did before the attack.
  void ExpectUnharmed() {
    ASSERT_TRUE(Alive()) << "gpusched died";
    auto r = Exchange(port_, Post("/filter", good_), 5s);
    ASSERT_TRUE(r) << "no answer after the attack";
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, good_answer_);
  }

  // Sends `body` to `verb` and expects `status` with a one-line JSON error.
  void ExpectError(const std::string& verb, const std::string& body, int status,
                   const std::string& extra_headers = "") {
    auto r = Exchange(port_, Post(verb, body, extra_headers), 20s);
    ASSERT_TRUE(r) << body.substr(0, 200);
    EXPECT_EQ(r->status, status) << body.substr(0, 200) << " -> " << r->body;
    EXPECT_TRUE(json::parse(r->body)["error"].is_string()) << r->body;
    EXPECT_EQ(r->body.find('\n'), std::string::npos);
  }

  int port_ = 0;
  int ops_port_ = 0;
  pid_t child_ = -1;
  std::string log_path_;
  std::string good_;
  std::string good_answer_;
};

TEST_F(Attack, both_node_lists_in_one_request_are_refused_not_crashing) {
  for (const char* body : {R"({"Pod":{},"Nodes":{"items":[]},"NodeNames":["gpu-node-h100-01"]})",
                           R"({"Pod":{},"Nodes":{"items":[{}]},"NodeNames":["a","b"]})",
                           R"({"Pod":{},"Nodes":{"items":[{}]},"NodeNames":["a","b","c","d"]})"}) {
    for (const char* verb : {"/filter", "/prioritize"}) ExpectError(verb, body, 400);
  }
  ExpectUnharmed();
}

TEST_F(Attack, idle_slow_and_lying_connections_do_not_starve_the_verbs_or_the_probes) {
  auto unloaded_start = Clock::now();
  ASSERT_TRUE(Exchange(port_, Post("/filter", good_)));
  double unloaded_ms = MillisSince(unloaded_start);

  std::vector<Socket> held;
  for (int port : {port_, ops_port_}) {
    for (int i = 0; i < 1000; ++i) held.emplace_back(port);  // idle: connect, send nothing
    for (int i = 0; i < 64; ++i) {                           // slow headers
      held.emplace_back(port);
      held.back().Send("POST /filter HTTP/1.1\r\nHost: x\r\n");
    }
    for (int i = 0; i < 16; ++i) {  // announce a big body, send a little
      held.emplace_back(port);
      held.back().Send(
          "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{\"Pod\":");
    }
  }
  for (auto& s : held) ASSERT_TRUE(s.ok());
  std::this_thread::sleep_for(200ms);

  auto start = Clock::now();
  auto r = Exchange(port_, Post("/filter", good_), 5s);
  double loaded_ms = MillisSince(start);
  ASSERT_TRUE(r) << "filter unanswered with " << held.size() << " connections held";
  EXPECT_EQ(r->body, good_answer_);
  start = Clock::now();
  auto health = Exchange(ops_port_, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 5s);
  double health_ms = MillisSince(start);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  std::printf(
      "filter unloaded %.2f ms, with 2x1080 connections held %.2f ms; ops healthz %.2f ms\n",
      unloaded_ms, loaded_ms, health_ms);
  EXPECT_LT(loaded_ms, 1000.0);
  EXPECT_LT(health_ms, 1000.0);

  // Slow and lying requests are cut at --request-timeout (3 s here) with a 408.
  Socket& lying = held[1000 + 64];
  auto timed_out = lying.Read(8s);
  ASSERT_TRUE(timed_out) << "a request that never completes was not cut off";
  EXPECT_EQ(timed_out->status, 408);
  ExpectUnharmed();
}

TEST_F(Attack, busy_keep_alive_clients_are_served_in_turn) {
  constexpr int kClients = 16;
  std::vector<double> first_answer_ms(kClients, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      Socket s(port_);
      auto start = Clock::now();
      for (int k = 0; k < 50; ++k) {
        if (!s.Send(Post("/filter", good_))) return;
        auto r = s.Read(10s);
        if (!r || r->status != 200) return;
        if (k == 0) first_answer_ms[i] = MillisSince(start);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (double ms : first_answer_ms) {
    EXPECT_GE(ms, 0) << "a client got no answer";
    EXPECT_LT(ms, 2000.0);
  }
  ExpectUnharmed();
}

TEST_F(Attack, malformed_framing_is_answered_at_once_and_the_connection_closed) {
  const std::string cases[] = {
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n",
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GARBAGE\r\n\r\n",
      // A body that is not a request: what follows is not read as further requests.
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}POST /filter HTTP/1.1\r\n",
  };
  for (const auto& request : cases) {
    Socket s(port_);
    ASSERT_TRUE(s.Send(request));
    auto r = s.Read(5s);
    ASSERT_TRUE(r) << request;
    EXPECT_GE(r->status, 400) << request;
    // At once, not at the 3 s request timeout.
    EXPECT_TRUE(s.ClosedWithin(1s)) << "connection left open after: " << request;
  }
  // Many header lines: refused once the header limit is passed, long before 3 million lines.
  Socket s(port_);
  ASSERT_TRUE(s.Send("POST /filter HTTP/1.1\r\nHost: x\r\n"));
  bool refused = false;
  for (int i = 0; i < 20000 && !refused; ++i) {
    refused = !s.Send("X-A: b\r\n");
  }
  auto r = s.Read(5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  ExpectUnharmed();
}

// The size limits, with a request timeout long enough that on a loaded machine (a sanitizer build
// beside the e2e tests' control planes) the size, not the clock, refuses a body: with the suite's
// 3 s, sending 64 MiB took longer and the server answered 408 first.
class AttackBodySize : public Attack {
  const char* RequestTimeout() const override { return "60"; }
};

TEST_F(AttackBodySize, compressed_chunked_and_oversized_bodies_are_refused_by_their_size) {
  ExpectError("/filter", std::string(1000, 'x'), 415, "Content-Encoding: gzip\r\n");
  // A chunked body past the limit: 413 after 64 MiB at most, not 300 MB later. The client may
  // send more than the limit before a send fails: the sockets' buffers take several MiB, and on a
  // loaded machine the server's close reaches the client late (93 MiB was seen with the test
  // command's shards four at a time).
  Socket s(port_);
  ASSERT_TRUE(s.Send("POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::string chunk = "100000\r\n" + std::string(0x100000, ' ') + "\r\n";  // 1 MiB
  int sent = 0;
  while (sent < 300 && s.Send(chunk)) ++sent;
  EXPECT_LE(sent, 160) << "the server kept reading a chunked body past its limit";
  auto r = s.Read(5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  auto big = Exchange(
      port_, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n", 5s);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  ExpectUnharmed();
}

TEST_F(Attack, numbers_inside_a_request_do_not_size_its_work) {
  json request = json::parse(testing::Fixture("extender/filter-request-fullnodes.json"));
  auto& nodes = request["Nodes"]["items"];
  ASSERT_FALSE(nodes.empty());
  for (auto& node : nodes) {
    node["status"]["allocatable"]["nvidia.com/gpu"] = "100000000";
    node["status"]["capacity"]["nvidia.com/gpu"] = "100000000";
  }
  for (const char* verb : {"/filter", "/prioritize"}) {
    auto start = Clock::now();
    auto r = Exchange(port_, Post(verb, request.dump()), 20s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_LT(MillisSince(start), 2000.0) << verb;
    if (std::string(verb) == "/filter") {
      EXPECT_NE(r->body.find("more nvidia.com/gpu than gpusched judges"), std::string::npos)
          << r->body;
    }
  }
  // Bad counts are a 400 naming the field, never a 500.
  for (const char* count : {"-1", "1.5", "99999999999999999999999", "1e400"}) {
    json pod = request["Pod"];
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = count;
    pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = count;
    json args = {{"Pod", pod}, {"NodeNames", {"gpu-node-h100-01"}}, {"Nodes", nullptr}};
    auto r = Exchange(port_, Post("/filter", args.dump()), 5s);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->status == 400 || r->status == 200) << count << " -> " << r->status;
    EXPECT_NE(r->status, 500) << count;
    if (std::string(count) == "-1" || std::string(count) == "1.5") {
      EXPECT_EQ(r->status, 400) << count;
    }
  }
  ExpectUnharmed();
}

// Issue #25 cases 5 and 7: one container with 160,000 distinct resource names took 23 s (sorted
// insertion, quadratic), and a 200 KB annotation quoted in every rejected node's reason made a
// 0.3 MiB request cost 967 MiB. Both are bounded by the request's size now.
TEST_F(Attack, many_resource_names_and_huge_annotations_cost_what_the_request_weighs) {
  json pod = json::parse(R"({"metadata":{"name":"p","namespace":"ns","uid":"u"},
      "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  auto& limits = pod["spec"]["containers"][0]["resources"]["limits"];
  for (int i = 0; i < 160000; ++i) limits["example.com/r" + std::to_string(i)] = "1";
  json names = {"gpu-node-h100-01", "gpu-node-a100-07"};
  auto start = Clock::now();
  auto r = Exchange(
      port_, Post("/filter", json{{"Pod", pod}, {"NodeNames", names}, {"Nodes", nullptr}}.dump()),
      60s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body.substr(0, 200);
  // A guard against the quadratic insertion coming back, not a speed check: 0.4 s in a Release
  // build, 19 s under the sanitizers beside the e2e tests' control planes; quadratic it was 23 s
  // in a Release build and minutes under the sanitizers.
  EXPECT_LT(MillisSince(start), 60000.0);

  // Every candidate node the sample cluster has, many times over: each rejected node's reason is
  // short, whatever the annotation holds.
  json big = json::parse(R"({"metadata":{"name":"p","namespace":"ns","uid":"u"},
      "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  big["metadata"]["annotations"]["gpusched.io/gpu-product"] =
      "NVIDIA-\n\x1b[31mX" + std::string(200000, 'Z');
  json many = json::array();
  for (int i = 0; i < 500; ++i) {
    for (const char* n : {"gpu-node-h100-01", "gpu-node-a100-07", "gpu-node-h100-02"})
      many.push_back(n);
  }
  std::string request = json{{"Pod", big}, {"NodeNames", many}, {"Nodes", nullptr}}.dump();
  auto answer = Exchange(port_, Post("/filter", request), 30s);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_LT(answer->body.size(), request.size() / 2 + 400 * many.size())
      << "answer " << answer->body.size() << " bytes for a request of " << request.size();
  EXPECT_EQ(answer->body.find("\\u001b"), std::string::npos) << "an escape reached the answer";
  ExpectUnharmed();
}

TEST_F(Attack, http_semantics_hold) {
  auto get = Exchange(port_, "GET /filter HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_NE(get->headers.find("Allow: POST"), std::string::npos);
  auto ranged = Exchange(port_, Post("/filter", good_, "Range: bytes=0-10\r\n"));
  ASSERT_TRUE(ranged);
  EXPECT_EQ(ranged->status, 200);
  EXPECT_EQ(ranged->body, good_answer_);
  // Keys are the Go field names exactly.
  ExpectError("/filter", R"({"pOD":{},"NodeNames":["gpu-node-h100-01"]})", 400);
  // Connection: close is honoured.
  Socket s(port_);
  ASSERT_TRUE(s.Send(Post("/filter", good_, "Connection: close\r\n")));
  auto r = s.Read();
  ASSERT_TRUE(r);
  EXPECT_TRUE(s.ClosedWithin(5s));
  ExpectUnharmed();
}

TEST_F(Attack, negative_or_fractional_gpus_on_a_node_are_refused_naming_the_field) {
  json request = json::parse(testing::Fixture("extender/filter-request-fullnodes.json"));
  ASSERT_TRUE(request["NodeNames"].is_null());
  ASSERT_FALSE(request["Nodes"]["items"].empty());
  auto valid = Exchange(port_, Post("/filter", request.dump()), 5s);
  ASSERT_TRUE(valid);
  ASSERT_EQ(valid->status, 200) << valid->body;
  // The API server stores neither a negative nor a fractional amount of an extended resource.
  const std::pair<const char*, const char*> cases[] = {{"-1", "negative quantity"},
                                                       {"-8", "negative quantity"},
                                                       {"-0.5", "negative quantity"},
                                                       {"1.5", "fractional quantity"},
                                                       {"500m", "fractional quantity"}};
  for (const auto& [count, reason] : cases) {
    json bad = request;
    bad["Nodes"]["items"].back()["status"]["allocatable"]["nvidia.com/gpu"] = count;
    auto r = Exchange(port_, Post("/filter", bad.dump()), 5s);
    ASSERT_TRUE(r) << count;
    EXPECT_EQ(r->status, 400) << count << " -> " << r->body;
    json answer = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(answer.is_object() && answer["error"].is_string()) << count << " -> " << r->body;
    std::string error = answer["error"].get<std::string>();
    EXPECT_NE(error.find(reason), std::string::npos) << count << " -> " << error;
    EXPECT_NE(error.find("allocatable"), std::string::npos) << count << " -> " << error;
    EXPECT_NE(error.find("nvidia.com/gpu"), std::string::npos) << count << " -> " << error;
    ASSERT_TRUE(Alive()) << "gpusched died on " << count;
    // The next valid full-Nodes request gets the answer it got before (and at the end a NodeNames
    // one, in ExpectUnharmed).
    auto again = Exchange(port_, Post("/filter", request.dump()), 5s);
    ASSERT_TRUE(again) << "no answer after " << count;
    EXPECT_EQ(again->status, 200);
    EXPECT_EQ(again->body, valid->body) << "after " << count;
  }
  ExpectUnharmed();
}

// A cap of 16 open connections (the smallest --max-connections takes), so that eviction shows with
// a few sockets.
class AttackConnectionCap : public Attack {
  const char* MaxConnections() const override { return "16"; }
};

TEST_F(AttackConnectionCap, idle_connections_past_the_cap_are_closed_oldest_first) {
  constexpr int kCap = 16;
  constexpr int kExtra = 4;
  // SetUp's own connection to the verb listener is closed (by both sides) by now.
  std::this_thread::sleep_for(300ms);
  // Each connection gets one request answered, then stays idle: the answer shows that the server
  // admitted it, and the connections' idle times start in the order they were opened.
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<Socket> held;
  held.reserve(kCap + kExtra);
  for (int i = 0; i < kCap + kExtra; ++i) {
    held.emplace_back(port_);
    ASSERT_TRUE(held.back().ok()) << "connection " << i;
    ASSERT_TRUE(held.back().Send(health)) << "connection " << i;
    auto r = held.back().Read(5s);
    ASSERT_TRUE(r) << "connection " << i << " was not served (refused at the cap?)";
    EXPECT_EQ(r->status, 200);
    // The server thread that wrote the answer may still hold the connection (not idle, so not
    // evictable) for a moment on a loaded machine; let it go before the next one comes.
    std::this_thread::sleep_for(20ms);
  }
  // The kExtra oldest made room for the newcomers; the kCap newest are open.
  for (int i = 0; i < kExtra; ++i) {
    EXPECT_TRUE(held[i].ClosedWithin(2s)) << "connection " << i << " (among the oldest) is open";
  }
  for (int i = kExtra; i < kCap + kExtra; ++i) {
    EXPECT_FALSE(held[i].ClosedWithin(50ms)) << "connection " << i << " (among the newest) closed";
  }
  // A fresh connection is answered, in place of the oldest still open.
  auto fresh = Exchange(port_, Post("/filter", good_), 5s);
  ASSERT_TRUE(fresh) << "a fresh request went unanswered with the cap reached";
  EXPECT_EQ(fresh->status, 200);
  EXPECT_EQ(fresh->body, good_answer_);
  EXPECT_TRUE(held[kExtra].ClosedWithin(2s)) << "the oldest open connection was not the one closed";
  // The others still carry requests.
  for (int i = kExtra + 1; i < kCap + kExtra; ++i) {
    ASSERT_TRUE(held[i].Send(Post("/filter", good_))) << "connection " << i;
    auto r = held[i].Read(5s);
    ASSERT_TRUE(r) << "connection " << i << " (among the newest) unanswered";
    EXPECT_EQ(r->body, good_answer_) << "connection " << i;
  }
  ExpectUnharmed();
}

// 320 MiB of uploads at once take longer than 3 s on a busy 2-core machine (under ASan more so).
// The request budget is raised past them: this is about memory given back after large requests
// that were all served (AttackBudget is about the bound).
class AttackLargeBodies : public Attack {
  const char* RequestTimeout() const override { return "120"; }
  std::vector<std::string> ExtraFlags() const override {
    return {"--max-inflight-body-bytes", "512Mi"};
  }
};

TEST_F(AttackLargeBodies, memory_returns_after_a_burst_of_large_requests) {
#ifdef __SANITIZE_ADDRESS__
  // ASan's allocator keeps freed memory in quarantine on purpose; the figure is glibc's.
  GTEST_SKIP() << "resident memory is only meaningful with the production allocator";
#endif
  std::this_thread::sleep_for(300ms);
  long idle = RssKiB(child_);
  ASSERT_GT(idle, 0);
  // Large but valid bodies: an unknown field carries the bulk, which the decoder skips.
  std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["gpu-node-h100-01"],"Pad":")" +
      std::string(40 << 20, 'x') + "\"}";
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = Exchange(port_, Post("/filter", body), 120s);
      EXPECT_TRUE(r && r->status == 200);
    });
  }
  for (auto& t : threads) t.join();
  std::this_thread::sleep_for(1500ms);  // the trim comes 1 s after the burst
  long after = RssKiB(child_);
  std::printf("RSS idle %ld KiB, after 8 x 40 MiB requests %ld KiB\n", idle, after);
  EXPECT_LT(after - idle, 50 * 1024);
  ExpectUnharmed();
}

TEST_F(Attack, http_framing_host_head_and_http10_keep_alive) {
  // Bare LF line ends: 400 at once, where the request used to wait for --request-timeout (408).
  for (const char* request : {"GET /healthz HTTP/1.1\nHost: x\n\n",
                              "POST /filter HTTP/1.1\r\nHost: x\nContent-Length: 2\r\n\r\n{}"}) {
    for (int port : {port_, ops_port_}) {
      Socket s(port);
      auto start = Clock::now();
      ASSERT_TRUE(s.Send(request));
      auto r = s.Read(5s);
      ASSERT_TRUE(r) << request;
      EXPECT_EQ(r->status, 400) << request;
      EXPECT_TRUE(json::parse(r->body)["error"].is_string()) << r->body;
      EXPECT_LT(MillisSince(start), 1000.0) << request;
      EXPECT_TRUE(s.ClosedWithin(1s)) << request;
    }
  }
  // HTTP/1.1 without Host, and any request with two: 400.
  for (const char* request :
       {"GET /healthz HTTP/1.1\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"}) {
    auto r = Exchange(ops_port_, request, 5s);
    ASSERT_TRUE(r) << request;
    EXPECT_EQ(r->status, 400) << request;
  }
  ExpectError("/filter", good_, 400, "Host: second.example\r\n");
  auto no_host =
      Exchange(port_,
               "POST /filter HTTP/1.1\r\nContent-Length: " + std::to_string(good_.size()) +
                   "\r\n\r\n" + good_,
               5s);
  ASSERT_TRUE(no_host);
  EXPECT_EQ(no_host->status, 400);
  // HEAD on the GET routes: the GET answer's head, no body (the next answer follows at once).
  for (int port : {port_, ops_port_}) {
    for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
      Socket s(port);
      ASSERT_TRUE(s.Send(std::string("HEAD ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n" +
                         "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
      auto head = s.ReadHead(5s);
      ASSERT_TRUE(head) << path;
      EXPECT_TRUE(head->headers.starts_with("HTTP/1.1 200 OK\r\n")) << head->headers;
      EXPECT_NE(head->headers.find("\r\nContent-Length: "), std::string::npos) << head->headers;
      // No body came after the head: the next bytes are the next answer.
      auto next = s.Read(5s);
      ASSERT_TRUE(next) << path;
      EXPECT_EQ(next->status, 200) << path;
      EXPECT_EQ(next->body, "ok\n") << path;
    }
    auto post = Exchange(port, "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 405);
    EXPECT_NE(post->headers.find("Allow: GET, HEAD"), std::string::npos) << post->headers;
  }
  // An HTTP/1.0 client asking for keep-alive is told so, and its connection stays open.
  Socket kept(port_);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(kept.Send("POST /filter HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: " +
                          std::to_string(good_.size()) + "\r\n\r\n" + good_));
    auto r = kept.Read(5s);
    ASSERT_TRUE(r) << "request " << i;
    EXPECT_EQ(r->body, good_answer_);
    EXPECT_NE(r->headers.find("\r\nConnection: keep-alive"), std::string::npos) << r->headers;
  }
  ExpectUnharmed();
}

// A request budget of 64 MiB (large requests may hold 56 MiB together) with bodies of up to
// 16 MiB.
class AttackBudget : public Attack {
  std::vector<std::string> ExtraFlags() const override {
    return {"--max-body-bytes", "16Mi", "--max-inflight-body-bytes", "64Mi"};
  }
};

TEST_F(AttackBudget, bodies_held_across_connections_stay_within_the_budget) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "resident memory is only meaningful with the production allocator";
#endif
  constexpr int kConnections = 20;
  constexpr size_t kBody = 15 << 20;  // three fit in 56 MiB, a fourth does not
  std::this_thread::sleep_for(300ms);
  long idle = RssKiB(child_);
  ASSERT_GT(idle, 0);
  // A valid request padded to 15 MiB with trailing blanks (JSON allows them).
  std::string body = good_ + std::string(kBody - good_.size(), ' ');
  std::vector<Socket> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.emplace_back(port_);
    ASSERT_TRUE(clients.back().ok());
    std::string head =
        "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n";
    ASSERT_TRUE(clients.back().Send(head + body.substr(0, 100)));  // then a trickle
  }
  // The excess is refused as soon as its header is read: 503, one-line JSON, connection closed.
  std::vector<Socket*> held;
  int refused = 0;
  for (auto& c : clients) {
    auto r = c.Read(500ms);
    if (!r) {
      held.push_back(&c);
      continue;
    }
    ++refused;
    EXPECT_EQ(r->status, 503);
    EXPECT_TRUE(json::parse(r->body)["error"].is_string()) << r->body;
    EXPECT_EQ(r->body.find('\n'), std::string::npos);
    EXPECT_NE(r->headers.find("Connection: close"), std::string::npos);
    EXPECT_TRUE(c.ClosedWithin(2s));
  }
  EXPECT_EQ(held.size(), 3u);
  EXPECT_EQ(refused, kConnections - 3);
  // The held ones trickle, then send all but their last byte: their bodies are in memory now.
  for (int k = 0; k < 5; ++k) {
    for (Socket* c : held) ASSERT_TRUE(c->Send(body.substr(100 + k, 1)));
    std::this_thread::sleep_for(20ms);
  }
  for (Socket* c : held) ASSERT_TRUE(c->Send(body.substr(105, body.size() - 106)));
  std::this_thread::sleep_for(500ms);
  long loaded = RssKiB(child_);
  // Probes and small requests still pass beside them.
  auto health = Exchange(ops_port_, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 5s);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto small = Exchange(port_, Post("/filter", good_), 5s);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200);
  EXPECT_EQ(small->body, good_answer_);
  auto metrics = Exchange(ops_port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 5s);
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("\ngpusched_http_budget_rejections_total " +
                               std::to_string(kConnections - 3)),
            std::string::npos)
      << metrics->body;
  std::printf("RSS idle %ld KiB, with %zu x 15 MiB bodies held and %d refused %ld KiB\n", idle,
              held.size(), refused, loaded);
  // Old: every connection's body was read, 20 x 15 MiB = 300 MiB.
  EXPECT_LT(loaded - idle, (64 + 32) * 1024);
  // The held requests complete and are answered.
  for (Socket* c : held) ASSERT_TRUE(c->Send(body.substr(body.size() - 1)));
  for (Socket* c : held) {
    auto r = c->Read(20s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, good_answer_);
  }
  ExpectUnharmed();
}

// The text log at debug level, captured, with values from requests that hold line breaks and
// terminal escapes.
class AttackLogForging : public Attack {
  std::vector<std::string> ExtraFlags() const override {
    return {"--log-format", "text", "--log-level", "debug"};
  }
  bool CaptureLog() const override { return true; }
};

TEST_F(AttackLogForging, request_values_cannot_forge_log_lines_or_reach_the_terminal) {
  const std::string forged = "\n[2030-01-01 00:00:00.000] [gpusched] [info] FORGED";
  const std::string escapes = "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://evil\x1b\\\x7f\xc2\x9b";
  json request = json::parse(good_);
  request["Pod"]["metadata"]["name"] = "p" + forged + escapes;
  request["Pod"]["metadata"]["namespace"] = "ns" + forged;
  request["Pod"]["metadata"]["annotations"]["gpusched.io/gpu-product"] = "A100" + forged + escapes;
  auto r = Exchange(port_, Post("/filter", request.dump()), 5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto prioritized = Exchange(port_, Post("/prioritize", request.dump()), 5s);
  ASSERT_TRUE(prioritized);
  // Error texts quoting request bytes: a header value (raw 0x9b is a one-byte CSI) and a body.
  auto coded = Exchange(port_,
                        Post("/filter", good_,
                             "Transfer-Encoding: x\x9b"
                             "2J\r\n"),
                        5s);
  ASSERT_TRUE(coded);
  EXPECT_EQ(coded->status, 501);
  json bad = json::parse(good_);
  bad["Pod"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1" + forged;
  auto rejected = Exchange(port_, Post("/filter", bad.dump()), 5s);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 400);
  ExpectUnharmed();
  ::kill(child_, SIGTERM);  // the log is whole once the process has ended
  for (int i = 0; i < 200 && Alive(); ++i) std::this_thread::sleep_for(25ms);

  std::string log = Log();
  ASSERT_NE(log.find("filter pod=ns\\n[2030"), std::string::npos) << log;
  size_t lines = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    auto b = static_cast<unsigned char>(log[i]);
    if (log[i] == '\n') {
      ++lines;
      continue;
    }
    ASSERT_TRUE(b >= 0x20 && b != 0x7f && b != 0x9b)
        << "raw byte 0x" << std::hex << int{b} << " at " << std::dec << i << " in:\n"
        << log;
  }
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(line.starts_with("[20") && !line.starts_with("[2030") &&
                line.find("] [gpusched] [") == 24)
        << "not a line gpusched wrote: " << line;
  }
  std::printf("%zu log lines, none forged\n", lines);
}

}  // namespace
}  // namespace gpusched::attack_test
