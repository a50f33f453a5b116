// The transport's memory: the hook for process-wide release
// (TransportOptions::after_large_requests) is called once a burst of large requests is over, never
// during it nor after small requests (the transport itself trims nothing: app/process_setup.h
// installs malloc_trim through ServerApp); and answers waiting for readers that do not read are
// held within the in-flight budget (issue #37).
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
  auto burst_start = std::chrono::steady_clock::now();
  ASSERT_EQ(Exchange(large), 200);
  ASSERT_EQ(Exchange(large), 200);
  // Not during the burst: the call comes a second after the last large answer.
  std::this_thread::sleep_for(300ms);
  // A machine so loaded that two requests and the pause took most of a second cannot tell one
  // burst from two (seen under the test command's e2e load): nothing to judge here then.
  if (std::chrono::steady_clock::now() - burst_start > 900ms) {
    GTEST_SKIP() << "two large requests took over 600 ms: too slow a machine to form one burst";
  }
  EXPECT_EQ(calls_.load(), 0) << "called before the burst was a second old";
  ASSERT_TRUE(CalledWithin(1, 5s)) << "never called after large requests";
  // Once per burst, and small requests alone never call it.
  ASSERT_EQ(Exchange(good), 200);
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(calls_.load(), 1);
}

// A transport whose every GET is answered with `answer_bytes` bytes: its own, or from one shared
// text, within a budget of 80 MiB (70 MiB for answers over 1 MiB: RequestBudget's reserve).
class SlowReaders : public ::testing::Test {
 protected:
  static constexpr size_t kAnswerBytes = 32 << 20;

  void Start(bool shared) {
    shared_text_ = std::make_shared<const std::string>(kAnswerBytes, 'x');
    TransportOptions o;
    o.port = 0;
    o.threads = 2;
    o.max_inflight_bytes = 80 << 20;
    HttpHandlers handlers;
    handlers.request = [this, shared](HttpRequest&, std::string_view) {
      HttpResponse r{200, "text/plain", shared ? "" : std::string(kAnswerBytes, 'x'), ""};
      if (shared) r.shared_tail = shared_text_;
      return r;
    };
    handlers.failure = [](int status, const std::string& reason, std::string_view) {
      return HttpResponse{status, "text/plain", reason, ""};
    };
    handlers.dropped = [this](const std::string& reason, std::string_view) {
      ++dropped_;
      return HttpResponse{503, "application/json", "{\"error\":\"" + reason + "\"}", ""};
    };
    transport_ = std::make_unique<HttpTransport>(o, handlers);
    port_ = transport_->Bind();
    thread_ = std::thread([this] { transport_->Run(); });
  }
  void TearDown() override {
    if (transport_) transport_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  // A connection that asks once and reads only the answer's head: the body waits in the server.
  std::optional<RawSocket::Response> AskAndReadHead(RawSocket& s) {
    if (!s.ok() || !s.Send("GET /report HTTP/1.1\r\nHost: x\r\n\r\n")) return std::nullopt;
    return s.ReadHead(10s);
  }

  std::shared_ptr<const std::string> shared_text_;
  std::atomic<int> dropped_{0};
  std::unique_ptr<HttpTransport> transport_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(SlowReaders, answers_past_the_budget_are_dropped_until_readers_take_theirs) {
  Start(false);
  // Two 32 MiB answers fit in the 70 MiB large requests may hold; the third is dropped.
  RawSocket first(port_), second(port_), third(port_);
  auto a = AskAndReadHead(first);
  auto b = AskAndReadHead(second);
  auto c = AskAndReadHead(third);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(b->status, 200);
  EXPECT_EQ(c->status, 503);
  EXPECT_EQ(dropped_.load(), 1);
  EXPECT_TRUE(third.ClosedWithin(10s)) << "a dropped answer closes its connection";
  // A reader that goes away gives its answer's bytes back: the next reader is served again (the
  // server learns of the close when it next writes, so it may take a few tries).
  first.Close();
  int status = 0;
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    RawSocket next(port_);
    auto r = AskAndReadHead(next);
    status = r ? r->status : -1;
    if (status != 200) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(status, 200) << "the closed reader's answer was never given back";
}

TEST_F(SlowReaders, a_shared_answer_costs_its_readers_nothing) {
  Start(true);
  // Four readers of the same 32 MiB text: 128 MiB if each held a copy, past the budget.
  std::vector<RawSocket> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back(port_);
    auto r = AskAndReadHead(readers.back());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(dropped_.load(), 0);
  // And the answer arrives whole: head, then the shared text as its Content-Length says.
  RawSocket whole(port_);
  ASSERT_TRUE(whole.Send("GET /report HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto r = whole.Read(30s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, *shared_text_);
}

}  // namespace
}  // namespace gpusched::transport_test
