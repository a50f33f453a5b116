#include "gpusched/server/http_server.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/policy/policy.h"
#include "testing/test_support.h"

namespace gpusched {
namespace {

using nlohmann::json;
using testing::Fixture;

// A server on 127.0.0.1 with an OS-chosen port, serving the sample cluster.
class ServerFixture : public ::testing::Test {
 protected:
  void Start(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<HttpServer>(options, service_, [this] {
      return Readiness{ready_.load(), "test"};
    });
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
        "extender/captured-kube-scheduler-1.26/filter-request.nodecache-false.json"}) {
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
        "extender/filter-request-nodecache.json"}) {
    std::string body = Fixture(f);
    auto res = Post(c, "/prioritize", body);
    ASSERT_TRUE(res) << f;
    EXPECT_EQ(res->status, 200) << f;
    json j = json::parse(res->body);
    ASSERT_TRUE(j.is_array());
    EXPECT_EQ(j.size(), json::parse(body)["NodeNames"].is_array()
                            ? json::parse(body)["NodeNames"].size()
                            : json::parse(body)["Nodes"]["items"].size());
    for (const auto& hp : j) {
      EXPECT_TRUE(hp["Score"].is_number_integer());
      EXPECT_GE(hp["Score"].get<int>(), 0);
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
  EXPECT_EQ(post_health->get_header_value("Allow"), "GET");
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

class SmallLimitServer : public ServerFixture {
  void SetUp() override {
    ServerOptions o;
    o.max_body_bytes = 4096;
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
}  // namespace gpusched
