// The transport's hook for process-wide memory release (TransportOptions::after_large_requests):
// called once a burst of large requests is over, never during it nor after small requests; the
// transport itself trims nothing (app/process_setup.h installs malloc_trim through ServerApp).
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "testing/raw_socket.h"
#include "testing/test_support.h"

namespace gpusched::transport_test {
namespace {

using namespace std::chrono_literals;
using testing::RawSocket;

std::string Post(const std::string& body) {
  return "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class TransportHook : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.after_large_requests = [this] { ++calls_; };
    server_ = std::make_unique<HttpServer>(o, service_, [] { return Readiness{true, false, ""}; });
    port_ = server_->Bind();
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }

  // One request on a fresh connection; its status, or -1.
  int Exchange(const std::string& body) {
    RawSocket s(port_);
    if (!s.ok() || !s.Send(Post(body))) return -1;
    auto r = s.Read(10s);
    return r ? r->status : -1;
  }

  // Waits up to `limit` for the hook to have been called `n` times.
  bool CalledWithin(int n, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (calls_.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    return calls_.load() >= n;
  }

  Published<ClusterSnapshot> snapshots_{testing::SampleSnapshot()};
  Published<Policy> policies_{std::make_shared<const Policy>(DefaultPolicySpec())};
  ExtenderService service_{snapshots_, policies_};
  std::atomic<int> calls_{0};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(TransportHook, is_called_once_a_second_after_a_burst_of_large_requests) {
  const std::string good = testing::Fixture("extender/filter-request-nodecache.json");
  ASSERT_EQ(Exchange(good), 200);
  // A valid request padded past 4 MiB with trailing blanks (JSON allows them).
  const std::string large = good + std::string(5 << 20, ' ');
  ASSERT_EQ(Exchange(large), 200);
  ASSERT_EQ(Exchange(large), 200);
  // Not during the burst: the call comes a second after the last large answer.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(calls_.load(), 0) << "called before the burst was a second old";
  ASSERT_TRUE(CalledWithin(1, 5s)) << "never called after large requests";
  // Once per burst, and small requests alone never call it.
  ASSERT_EQ(Exchange(good), 200);
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(calls_.load(), 1);
}

}  // namespace
}  // namespace gpusched::transport_test
