#include "gpusched/server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/logging.h"
#include "testing/raw_socket.h"
#include "testing/test_support.h"

namespace gpusched::http_server_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::Fixture;

using testing::RawSocket;

// A server on 127.0.0.1 with an OS-chosen port, serving the sample cluster.
class ServerFixture : public ::testing::Test {
 protected:
  void Start(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<HttpServer>(
        options, service_,
        [this] {
          return Readiness{ready_.load(), false, "test"};
        },
        &metrics_);
    port_ = server_->Bind();
    thread_ = std::thread([this] { server_->Run(); });
  }
  void SetUp() override { Start(ServerOptions{}); }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);  // as Go's client, which kube-scheduler uses
    c.set_read_timeout(10, 0);
    return c;
  }
  httplib::Result Post(httplib::Client& c, const std::string& path, const std::string& body) {
    return c.Post(path.c_str(), body, "application/json");
  }

  // The exposition line of an event series with no labels, or of `labels`; -1 when absent.
  double Scraped(const std::string& series) {
    std::string text = metrics_.Scrape();
    size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
  }

  Metrics metrics_;
  Published<ClusterSnapshot> snapshots_{testing::SampleSnapshot()};
  Published<Policy> policies_{std::make_shared<const Policy>(DefaultPolicySpec())};
  ExtenderService service_{snapshots_, policies_};
  std::atomic<bool> ready_{true};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(ServerFixture, filter_and_prioritize_answer_every_fixture) {
  auto c = Client();
  for (const char* f :
       {"extender/filter-request-nodecache.json", "extender/filter-request-fullnodes.json",
        "extender/captured-kube-scheduler-1.26/filter-request.nodecache-true.json",
        "extender/captured-kube-scheduler-1.26/filter-request.nodecache-false.json",
        "extender/captured-kube-scheduler-1.34/filter-request.nodecache-true.json",
        "extender/captured-kube-scheduler-1.36/filter-request.nodecache-true.json",
        "extender/captured-kube-scheduler-1.36/filter-request.nodecache-false.json"}) {
    std::string body = Fixture(f);
    auto res = Post(c, "/filter", body);
    ASSERT_TRUE(res) << f;
    EXPECT_EQ(res->status, 200) << f;
    EXPECT_EQ(res->body, EncodeExtenderFilterResult(service_.Filter(DecodeExtenderArgs(body))))
        << f;
    json j = json::parse(res->body);
    EXPECT_TRUE(j.contains("FailedAndUnresolvableNodes"));
    EXPECT_EQ(j["Error"], "");
  }
  for (const char* f :
       {"extender/captured-kube-scheduler-1.26/prioritize-request.nodecache-true.json",
        "extender/captured-kube-scheduler-1.26/prioritize-request.nodecache-false.json",
        "extender/captured-kube-scheduler-1.36/prioritize-request.nodecache-true.json",
        "extender/captured-kube-scheduler-1.36/prioritize-request.nodecache-false.json",
        "extender/filter-request-nodecache.json"}) {
    std::string body = Fixture(f);
    auto res = Post(c, "/prioritize", body);
    ASSERT_TRUE(res) << f;
    EXPECT_EQ(res->status, 200) << f;
    EXPECT_EQ(res->body, EncodeHostPriorityList(service_.Prioritize(DecodeExtenderArgs(body))))
        << f;
    json j = json::parse(res->body);
    ASSERT_TRUE(j.is_array());
    // Only the nodes above the request's lowest score are listed (ExtenderService::Prioritize).
    EXPECT_LE(j.size(), json::parse(body)["NodeNames"].is_array()
                            ? json::parse(body)["NodeNames"].size()
                            : json::parse(body)["Nodes"]["items"].size());
    for (const auto& hp : j) {
      EXPECT_TRUE(hp["Score"].is_number_integer());
      EXPECT_GE(hp["Score"].get<int>(), 1);
      EXPECT_LE(hp["Score"].get<int>(), 10);
    }
  }
}

TEST_F(ServerFixture, bad_requests_get_400_json_and_the_next_request_succeeds) {
  const std::string good = Fixture("extender/filter-request-nodecache.json");
  const std::string bad_bodies[] = {
      "",
      "not json",
      "[]",
      R"({"Pod":5,"NodeNames":[]})",
      R"({"Pod":{},"NodeNames":"gpu-node-1"})",
      R"({"NodeNames":["a"]})",
      R"({"Pod":{"metadata":{}},"NodeNames":["a"]}garbage)",
      "{\"Pod\":{\"metadata\":",
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"lots"}}}]}},"NodeNames":[]})",
  };
  auto c = Client();
  for (const auto& bad : bad_bodies) {
    for (const char* verb : {"/filter", "/prioritize"}) {
      auto res = Post(c, verb, bad);
      ASSERT_TRUE(res) << bad;
      EXPECT_EQ(res->status, 400) << bad;
      json j = json::parse(res->body);
      EXPECT_TRUE(j["error"].is_string()) << res->body;
      EXPECT_EQ(res->body.find('\n'), std::string::npos);
      auto ok = Post(c, verb, good);
      ASSERT_TRUE(ok);
      EXPECT_EQ(ok->status, 200) << "after " << bad;
    }
  }
}

TEST_F(ServerFixture, unknown_routes_and_methods_get_json_errors) {
  auto c = Client();
  auto res = Post(c, "/bind", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(json::parse(res->body)["error"].is_string());
  auto get = c.Get("/filter");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_TRUE(json::parse(get->body)["error"].is_string());
  auto post_health = Post(c, "/healthz", "{}");
  ASSERT_TRUE(post_health);
  EXPECT_EQ(post_health->status, 405);
  EXPECT_EQ(post_health->get_header_value("Allow"), "GET, HEAD");
}

TEST_F(ServerFixture, head_answers_as_get_without_a_body) {
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    RawSocket c(port_);
    std::string get = std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    std::string head = std::string("HEAD ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_TRUE(c.Send(get));
    auto full = c.Read();
    ASSERT_TRUE(full) << path;
    ASSERT_TRUE(c.Send(head));
    auto headed = c.ReadHead();  // a HEAD answer has no body whatever its Content-Length says
    ASSERT_TRUE(headed) << path;
    EXPECT_EQ(headed->status, 200) << path;
    EXPECT_NE(headed->headers.find("Content-Length: "), std::string::npos) << path;
    if (std::string(path) != "/metrics") {  // scrapes differ in their values
      EXPECT_EQ(headed->headers, full->headers) << path;
    }
    // No body came after it: the next answer on the connection starts right away.
    ASSERT_TRUE(c.Send(get));
    auto next = c.Read();
    ASSERT_TRUE(next) << path << " after HEAD: " << c.pending().substr(0, 100);
    EXPECT_EQ(next->status, 200) << path;
  }
  // On a verb, HEAD is a wrong method like GET.
  RawSocket c(port_);
  ASSERT_TRUE(c.Send("HEAD /filter HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto verb = c.ReadHead();
  ASSERT_TRUE(verb);
  EXPECT_EQ(verb->status, 405);
  EXPECT_NE(verb->headers.find("Allow: POST\r\n"), std::string::npos) << verb->headers;
}

TEST_F(ServerFixture, bare_lf_and_host_errors_are_400_at_once) {
  const std::string cases[] = {
      "GET /healthz HTTP/1.1\nHost: x\n\n",
      "GET /healthz HTTP/1.1\r\nHost: x\n\r\n",
      "GET /healthz HTTP/1.1\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
      "GET /healthz HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n",
  };
  for (const auto& request : cases) {
    RawSocket c(port_);
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(c.Send(request));
    auto r = c.Read();
    ASSERT_TRUE(r) << request;
    EXPECT_EQ(r->status, 400) << request;
    EXPECT_TRUE(json::parse(r->body)["error"].is_string()) << r->body;
    EXPECT_TRUE(c.ClosedWithin(2s)) << request;
    // At once: the request timeout here is 10 s.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << request;
  }
  // HTTP/1.0 may leave Host out.
  RawSocket c(port_);
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServerFixture, an_http10_keep_alive_is_answered_as_kept) {
  RawSocket c(port_);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.Send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    auto r = c.Read();
    ASSERT_TRUE(r) << "answer " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->headers.find("\r\nConnection: keep-alive\r\n"), std::string::npos) << r->headers;
  }
  // Without it the HTTP/1.0 connection closes, and HTTP/1.1 keeps it without saying so.
  RawSocket old(port_);
  ASSERT_TRUE(old.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  auto closed = old.Read();
  ASSERT_TRUE(closed);
  EXPECT_NE(closed->headers.find("Connection: close"), std::string::npos) << closed->headers;
  EXPECT_TRUE(old.ClosedWithin(2s));
  RawSocket current(port_);
  ASSERT_TRUE(current.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto kept = current.Read();
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->headers.find("Connection:"), std::string::npos) << kept->headers;
}

TEST_F(ServerFixture, not_ready_answers_are_logged_throttled_and_counted) {
  std::ostringstream log;
  struct RestoreLogging {
    ~RestoreLogging() { ConfigureLogging(LogFormat::kText, spdlog::level::info); }
  } restore;
  ConfigureLogging(LogFormat::kText, spdlog::level::info,
                   std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  ready_ = false;
  auto c = Client();
  const std::string body = Fixture("extender/filter-request-nodecache.json");
  // Read under the sink's lock (flush takes it), after the server thread's writes.
  auto logged = [&] {
    spdlog::default_logger()->flush();
    return log.str();
  };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Post(c, "/filter", body)->status, 503);
  std::string first = logged();
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(Post(c, "/prioritize", body)->status, 503);
  std::string after = logged();
  // The first at once; the next four within the second unlogged, then counted on the next line.
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 1) << first;
  EXPECT_NE(first.find("filter: answered 503 to 127.0.0.1:"), std::string::npos) << first;
  EXPECT_NE(first.find("gpusched is not ready: test\n"), std::string::npos) << first;
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 2) << after;
  EXPECT_NE(after.find("prioritize: answered 503"), std::string::npos) << after;
  EXPECT_NE(after.find("not ready: test (4 more such answers since the last line)\n"),
            std::string::npos)
      << after;
  EXPECT_EQ(Scraped("gpusched_extender_requests_total{outcome=\"not_ready\",verb=\"filter\"}"), 5);
  EXPECT_EQ(Scraped("gpusched_extender_requests_total{outcome=\"not_ready\",verb=\"prioritize\"}"),
            1);
}

TEST(ServerMetrics, not_ready_series_are_shown_at_zero_from_the_start) {
  Metrics metrics;
  std::string text = metrics.Scrape();
  for (const char* verb : {"filter", "prioritize"}) {
    std::string series =
        std::string("gpusched_extender_requests_total{outcome=\"not_ready\",verb=\"") + verb +
        "\"} 0";
    EXPECT_NE(text.find(series), std::string::npos) << text;
  }
  EXPECT_NE(text.find("\ngpusched_http_budget_rejections_total 0"), std::string::npos) << text;
}

TEST_F(ServerFixture, health_and_readiness) {
  auto c = Client();
  auto h = c.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(c.Get("/readyz")->status, 200);
  ready_ = false;
  EXPECT_EQ(c.Get("/readyz")->status, 503);
}

TEST_F(ServerFixture, concurrent_clients_get_consistent_answers) {
  const std::string body = Fixture("extender/filter-request-nodecache.json");
  const std::string expected =
      EncodeExtenderFilterResult(service_.Filter(DecodeExtenderArgs(body)));
  std::atomic<int> mismatches{0};
  auto worker = [&] {
    auto c = Client();
    for (int i = 0; i < 50; ++i) {
      auto res = Post(c, "/filter", body);
      if (!res || res->status != 200 || res->body != expected) mismatches.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// The ops listener's guard for its probes (issue #37): however many scrapes and report reads are
// under way, no more than max_concurrent_reports are built at once, so a thread is always free
// for /healthz and /readyz.
TEST_F(ServerFixture, reports_past_their_limit_get_503_and_the_probes_still_answer) {
  server_->Stop();
  thread_.join();
  ServerOptions o;
  o.port = 0;
  o.serve_verbs = false;
  o.threads = 2;
  o.max_concurrent_reports = 1;
  std::mutex mu;
  std::condition_variable cv;
  bool building = false, release = false;
  server_ = std::make_unique<HttpServer>(
      o, service_,
      [] {
        return Readiness{true, false, "test"};
      },
      &metrics_);
  server_->AddGetRoute("/slow-report", [&] {
    std::unique_lock lock(mu);
    building = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return HttpResponse{200, "application/json", "{}", ""};
  });
  port_ = server_->Bind();
  thread_ = std::thread([this] { server_->Run(); });

  std::thread reader([this] {
    auto c = Client();
    auto r = c.Get("/slow-report");
    EXPECT_TRUE(r && r->status == 200);
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return building; }));
  }
  auto c = Client();
  auto busy = c.Get("/metrics");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503) << "a second report was built beside the first";
  EXPECT_NE(busy->body.find("\"error\""), std::string::npos);
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(Scraped("gpusched_http_reports_busy_total"), 1);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  reader.join();
  // Once the report is built, the next scrape goes through.
  auto scrape = c.Get("/metrics");
  ASSERT_TRUE(scrape);
  EXPECT_EQ(scrape->status, 200);
}

// A request budget of 1 MiB (every request here is small, so it may take all of it), under the
// default body limit of 64 MiB.
class SmallBudgetServer : public ServerFixture {
  void SetUp() override {
    ServerOptions o;
    o.max_inflight_bytes = 1 << 20;
    Start(o);
  }
};

TEST_F(SmallBudgetServer, a_request_past_the_budget_gets_503_json_and_is_closed) {
  auto post = [](size_t length) {
    return "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(length) +
           "\r\n\r\n";
  };
  // A body the budget could never hold is too large (413), not a reason to retry later (503).
  RawSocket huge(port_);
  ASSERT_TRUE(huge.Send(post(2 << 20)));
  auto too_large = huge.Read();
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);

  RawSocket holder(port_);
  ASSERT_TRUE(holder.Send(post(800 << 10) + "{"));  // held whole from its header on
  std::this_thread::sleep_for(100ms);
  RawSocket late(port_);
  ASSERT_TRUE(late.Send(post(300 << 10)));
  auto r = late.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_TRUE(json::parse(r->body)["error"].is_string()) << r->body;
  EXPECT_EQ(r->body.find('\n'), std::string::npos);
  EXPECT_NE(r->headers.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(late.ClosedWithin(2s));
  EXPECT_EQ(Scraped("gpusched_http_budget_rejections_total"), 1);
  // What fits beside the held body still passes.
  auto c = Client();
  auto ok = Post(c, "/filter", Fixture("extender/filter-request-nodecache.json"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  // Once the holder's connection closes, its budget is free again for a large request.
  holder.Close();
  std::this_thread::sleep_for(100ms);
  const std::string good = Fixture("extender/filter-request-nodecache.json");
  std::string padded = std::string((200 << 10) - good.size(), ' ') + good;  // JSON allows it
  RawSocket again(port_);
  ASSERT_TRUE(again.Send(post(padded.size()) + padded));
  auto served = again.Read();
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200) << served->body;
}

class SmallLimitServer : public ServerFixture {
  void SetUp() override {
    ServerOptions o;
    o.limits.max_body_bytes = 4096;
    o.url_prefix = "/gpu-extender/";
    o.filter_verb = "filterVerb";
    Start(o);
  }
};

TEST_F(SmallLimitServer, oversized_body_is_413_and_routes_follow_prefix_and_verbs) {
  auto c = Client();
  std::string big = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[)";
  for (int i = 0; i < 500; ++i)
    big += (i ? ",\"" : "\"") + std::string("node-") + std::to_string(i) + "\"";
  big += "]}";
  ASSERT_GT(big.size(), 4096u);
  auto res = Post(c, "/gpu-extender/filterVerb", big);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(json::parse(res->body)["error"].is_string());

  auto c2 = Client();
  std::string small =
      Fixture("extender/captured-kube-scheduler-1.26/filter-request.nodecache-true.json");
  auto ok = Post(c2, "/gpu-extender/filterVerb", small);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(Post(c2, "/gpu-extender/prioritize", small)->status, 200);
  EXPECT_EQ(Post(c2, "/filter", small)->status, 404);
}

}  // namespace
}  // namespace gpusched::http_server_test
