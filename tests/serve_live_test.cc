// End to end: the gpusched binary, started with --kubeconfig against the fake API server, answers
// filter from the live state, and a pod created or deleted on the server changes the next answer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::serve_live_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

class ServeLive : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.RequireToken(FakeApiServer::kToken);
    server_.SetDelay(api_delay_);
    server_.UpsertNode(testing::MakeGpuNode("gpu-a", 8));
    server_.UpsertNode(testing::MakeGpuNode("gpu-b", 8));
    server_.UpsertPod(testing::MakeGpuPod("ns", "big", "uid-big", "gpu-a", 6));
    kubeconfig_ = std::filesystem::temp_directory_path() /
                  ("gpusched-serve-live-" + std::to_string(::getpid()) + ".yaml");
    server_.WriteKubeconfig(kubeconfig_);
    port_ = testing::FreePort();
    child_ = ::fork();
    if (child_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test process
      std::string listen = "127.0.0.1:" + std::to_string(port_);
      std::string not_ready_wait = std::to_string(not_ready_wait_.count());
      ::execl(GPUSCHED_BINARY, GPUSCHED_BINARY, "serve", "--kubeconfig", kubeconfig_.c_str(),
              "--listen", listen.c_str(), "--log-level", "warn", "--not-ready-wait",
              not_ready_wait.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // gpusched must stop on SIGTERM; one that does not is a failure, and is killed so that it cannot
  // outlive the test and hold CTest's output pipe open (a clean-clone run hung so, 2026-11-29).
  void TearDown() override {
    ::kill(child_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 1200 && ::waitpid(child_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(25ms);
    }
    if (::waitpid(child_, &status, WNOHANG) == 0) {
      ADD_FAILURE() << "gpusched serve did not exit within 30 s of SIGTERM";
      ::kill(child_, SIGKILL);
      ::waitpid(child_, &status, 0);
    }
    std::filesystem::remove(kubeconfig_);
  }
  // POSTs a filter request for a pod asking `gpus` GPUs on gpu-a and gpu-b.
  nlohmann::json Filter(httplib::Client& c, int gpus) {
    return Verb(c, "/filter", testing::MakeGpuPod("ns", "new", "uid-new", "", gpus, "Pending"),
                {"gpu-a", "gpu-b"});
  }
  nlohmann::json Verb(httplib::Client& c, const char* verb, const nlohmann::json& pod,
                      const std::vector<std::string>& nodes) {
    nlohmann::json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes}};
    auto res = c.Post(verb, args.dump(), "application/json");
    if (!res || res->status != 200) return nullptr;
    return nlohmann::json::parse(res->body);
  }
  static std::vector<std::string> Passing(const nlohmann::json& answer) {
    std::vector<std::string> names;
    if (answer.is_object()) names = answer["NodeNames"].get<std::vector<std::string>>();
    return names;
  }
  bool Ready(httplib::Client& c) {
    return Eventually([&] {
      auto r = c.Get("/readyz");
      return r && r->status == 200;
    });
  }
  template <class F>
  bool Eventually(F condition) {
    for (int i = 0; i < 500; ++i) {  // at most 10 s
      if (condition()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  std::chrono::milliseconds api_delay_{0};          // before every answer of the API server
  std::chrono::milliseconds not_ready_wait_{1000};  // serve's --not-ready-wait (its default)
  FakeApiServer server_;
  std::string kubeconfig_;
  int port_ = 0;
  pid_t child_ = -1;
};

TEST_F(ServeLive, answers_from_the_live_state_and_follows_pod_changes) {
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(1, 0);
  c.set_read_timeout(2, 0);
  ASSERT_TRUE(Eventually([&] {
    auto r = c.Get("/readyz");
    return r && r->status == 200;
  })) << "gpusched never became ready";
  auto passes = [](const nlohmann::json& answer) {
    std::vector<std::string> names;
    if (answer.is_object()) names = answer["NodeNames"].get<std::vector<std::string>>();
    return names;
  };
  // gpu-a has 2 free, gpu-b 8: a 4-GPU pod fits gpu-b only.
  ASSERT_TRUE(
      Eventually([&] { return passes(Filter(c, 4)) == std::vector<std::string>{"gpu-b"}; }));
  server_.DeletePod("ns", "big");
  ASSERT_TRUE(Eventually([&] {
    return passes(Filter(c, 4)) == std::vector<std::string>{"gpu-a", "gpu-b"};
  }));
  server_.UpsertPod(testing::MakeGpuPod("ns", "filler", "uid-filler", "gpu-b", 7));
  ASSERT_TRUE(
      Eventually([&] { return passes(Filter(c, 4)) == std::vector<std::string>{"gpu-a"}; }));
  nlohmann::json answer = Filter(c, 4);
  EXPECT_EQ(answer["FailedNodes"]["gpu-b"], "Insufficient nvidia.com/gpu");
  // A live server's scrape names what each of its reflectors skipped, the DRA kinds too (the fake
  // API server serves none of them: their lists fail and are retried). Scraped twice: the series
  // outlive the scrape that made them (a sanitized build of the binary aborts if they do not).
  for (int i = 0; i < 2; ++i) {
    auto metrics = c.Get("/metrics");
    ASSERT_TRUE(metrics);
    ASSERT_EQ(metrics->status, 200);
    for (const char* kind : {"node", "pod", "resourceslice", "resourceclaim", "deviceclass"}) {
      EXPECT_NE(metrics->body.find("gpusched_inventory_objects_skipped_total{kind=\"" +
                                   std::string(kind) + "\""),
                std::string::npos)
          << kind;
    }
  }
}

// Issue #25: two prioritize calls with made-up pods, one node each, made every GPU of both nodes
// Insufficient for 30 s, and a million of them stayed in memory.
TEST_F(ServeLive, made_up_pods_take_no_gpus_from_anyone) {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(5, 0);
  ASSERT_TRUE(Ready(c));
  server_.DeletePod("ns", "big");
  ASSERT_TRUE(Eventually([&] { return Passing(Filter(c, 8)).size() == 2; }));
  for (int i = 0; i < 2000; ++i) {
    std::string id = "made-up-" + std::to_string(i);
    nlohmann::json pod = testing::MakeGpuPod("x", id, "uid-" + id, "", 8, "Pending");
    Verb(c, "/prioritize", pod, {i % 2 ? "gpu-a" : "gpu-b"});
    Verb(c, "/filter", pod, {i % 2 ? "gpu-a" : "gpu-b"});
  }
  std::this_thread::sleep_for(300ms);  // the publisher applies what it would apply
  EXPECT_EQ(Passing(Filter(c, 8)), (std::vector<std::string>{"gpu-a", "gpu-b"}));
  auto ready = c.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_NE(ready->body.find("0 GPU pods known"), std::string::npos) << ready->body;
}

// A pod whose cycle failed after gpusched's filter (bind, PreBind or Permit) was refused on the
// node it had been assumed on; other pods must still see that node taken meanwhile.
TEST_F(ServeLive, a_retried_pod_is_judged_without_its_own_assumption) {
  nlohmann::json pending = testing::MakeGpuPod("ns", "retried", "uid-retried", "", 2, "Pending");
  server_.UpsertPod(pending);
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(5, 0);
  ASSERT_TRUE(Ready(c));
  // gpu-a has 2 free: the only passing node of this filter is assumed for the pod.
  ASSERT_TRUE(Eventually([&] {
    return Passing(Verb(c, "/filter", pending, {"gpu-a"})) == std::vector<std::string>{"gpu-a"};
  }));
  ASSERT_TRUE(Eventually([&] {
    return Passing(Filter(c, 2)) == std::vector<std::string>{"gpu-b"};
  })) << "another pod must see gpu-a taken by the assumption";
  // kube-scheduler retries the pod: it still fits where it was assumed.
  for (int retry = 0; retry < 3; ++retry) {
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(Passing(Verb(c, "/filter", pending, {"gpu-a"})), std::vector<std::string>{"gpu-a"})
        << "retry " << retry;
  }
}

// A restarted gpusched answered filter with 503 not_ready while its lists were on their way, and
// kube-scheduler 1.26 then parked the pod for up to five minutes (issue #25, case 2).
class ServeLiveStarting : public ServeLive {
 protected:
  void SetUp() override {
    api_delay_ = 150ms;  // each list page and watch takes this long: ready after about 300 ms
    // A loaded machine (the test command runs the end-to-end tests beside the unit tests) may take
    // longer than the default second to sync; the wait, not its length, is what is tested here.
    not_ready_wait_ = 5000ms;
    ServeLive::SetUp();
  }
};

TEST_F(ServeLiveStarting, a_verb_during_startup_waits_for_the_inventory_instead_of_failing) {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(5, 0);
  // The first filter that reaches the port, before the lists are in, is answered from them.
  nlohmann::json answer;
  ASSERT_TRUE(Eventually([&] {
    auto r =
        c.Post("/filter",
               nlohmann::json{{"Pod", testing::MakeGpuPod("ns", "p", "uid-p", "", 4, "Pending")},
                              {"Nodes", nullptr},
                              {"NodeNames", {"gpu-a", "gpu-b"}}}
                   .dump(),
               "application/json");
    if (!r) return false;  // not listening yet
    EXPECT_EQ(r->status, 200) << r->body;
    answer = nlohmann::json::parse(r->body, nullptr, false);
    return true;
  }));
  EXPECT_EQ(Passing(answer), std::vector<std::string>{"gpu-b"});  // gpu-a has 2 free
}

}  // namespace
}  // namespace gpusched::serve_live_test
