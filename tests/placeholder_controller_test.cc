#include "gpusched/app/placeholder_controller.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/codec/placeholder_codec.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/fake_apiserver.h"

namespace gpusched::placeholder_controller_test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

KubeConfig ConfigFor(const testing::FakeApiServer& server) {
  KubeConfig c;
  c.server = server.url();
  c.token = testing::FakeApiServer::kToken;
  return c;
}

json OldDriverNode(const std::string& name, const std::string& driver = "535.104.05") {
  json node = testing::MakeGpuNode(name, 8);
  node["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = driver;
  return node;
}

// A pending pod asking for a driver no node has, with a toleration and a node selector of its
// own, created long ago.
json WaitingPod() {
  json pod = testing::MakeGpuPod("ml", "train", "train-uid", "", 1, "Pending");
  pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  pod["metadata"]["annotations"]["gpusched.io/min-cuda-driver"] = "550";
  pod["spec"]["tolerations"] =
      json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  pod["spec"]["nodeSelector"] = {{"pool", "training"}};
  return pod;
}

// metadata.<field> of `pod`, an empty object when absent (a const json's [] must not miss).
json MetadataMap(const json& pod, const char* field) {
  return pod.value("/metadata"_json_pointer, json::object()).value(field, json::object());
}

bool IsPlaceholderJson(const json& pod) {
  return MetadataMap(pod, "labels").contains(kPlaceholderLabel);
}

std::optional<json> PlaceholderIn(const testing::FakeApiServer& server) {
  for (const json& p : server.Pods()) {
    if (IsPlaceholderJson(p)) return p;
  }
  return std::nullopt;
}

template <class Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds limit = 15s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

class PlaceholderControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 200; ++i) server_.UpsertNode(OldDriverNode("old-" + std::to_string(i)));
    for (auto& n : server_.Nodes()) {
      n["metadata"]["labels"]["pool"] = "training";
      server_.UpsertNode(n);
    }
    server_.UpsertPod(WaitingPod());
    LiveInventoryOptions live;
    live.publish_interval = 5ms;
    live.dra = false;
    source_ = MakeLiveSource(ConfigFor(server_), GpuResourceNames(), live);
    PolicySpec spec = DefaultPolicySpec();
    spec.autoscaling.placeholders.after_seconds = 0;
    policies_.Set(std::make_shared<const Policy>(spec));
  }

  std::unique_ptr<PlaceholderController> Replica(const std::string& name) {
    return std::make_unique<PlaceholderController>(
        ConfigFor(server_), *source_, policies_,
        PlaceholderControllerOptions{"gpusched", name, 50ms, 2s});
  }

  testing::FakeApiServer server_;
  std::unique_ptr<InventorySource> source_;
  Published<Policy> policies_;
};

TEST_F(PlaceholderControllerTest, one_replica_writes_one_placeholder_that_copies_the_pod) {
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(WaitFor([&] { return PlaceholderIn(server_).has_value(); }));
  std::this_thread::sleep_for(300ms);  // a second writer would have written by now
  int placeholders = 0;
  for (const json& p : server_.Pods()) placeholders += IsPlaceholderJson(p);
  EXPECT_EQ(placeholders, 1);
  json ph = *PlaceholderIn(server_);
  EXPECT_EQ(ph["metadata"]["name"], "gpusched-placeholder-train-uid");
  EXPECT_EQ(ph["metadata"]["namespace"], "ml");
  EXPECT_EQ(ph["metadata"]["ownerReferences"][0]["uid"], "train-uid");
  EXPECT_EQ(ph["spec"]["priorityClassName"], "gpusched-placeholder");
  EXPECT_EQ(ph["spec"]["terminationGracePeriodSeconds"], 0);
  EXPECT_EQ(ph["spec"]["tolerations"], WaitingPod()["spec"]["tolerations"]);
  EXPECT_EQ(ph["spec"]["nodeSelector"], WaitingPod()["spec"]["nodeSelector"]);
  EXPECT_EQ(ph["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  const json& excluded =
      ph["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"][0]["matchExpressions"][0];
  EXPECT_EQ(excluded["key"], "kubernetes.io/hostname");
  EXPECT_EQ(excluded["operator"], "NotIn");
  EXPECT_EQ(excluded["values"].size(), 200u);

  Metrics metrics_a, metrics_b;
  metrics_a.AddCollector(a->Collector());
  metrics_b.AddCollector(b->Collector());
  std::string scrape = metrics_a.Scrape() + metrics_b.Scrape();
  EXPECT_NE(scrape.find("gpusched_placeholder_writer 1"), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("gpusched_placeholder_writer 0"), std::string::npos) << scrape;

  // The writer goes: it gives the Lease up, and the other takes over.
  bool a_wrote = metrics_a.Scrape().find("gpusched_placeholder_writer 1") != std::string::npos;
  (a_wrote ? a : b).reset();
  Metrics& survivor = a_wrote ? metrics_b : metrics_a;
  EXPECT_TRUE(WaitFor(
      [&] { return survivor.Scrape().find("gpusched_placeholder_writer 1") != std::string::npos; },
      5s));
}

TEST_F(PlaceholderControllerTest, the_node_comes_the_placeholder_goes_and_no_second_one_follows) {
  auto writer = Replica("only");
  ASSERT_TRUE(WaitFor([&] { return PlaceholderIn(server_).has_value(); }));
  // The autoscaler's node: kube-scheduler binds the placeholder there.
  server_.UpsertNode(OldDriverNode("new-node", "560.35.03"));
  json ph = *PlaceholderIn(server_);
  ph["spec"]["nodeName"] = "new-node";
  ph["status"]["phase"] = "Running";
  server_.UpsertPod(ph);
  ASSERT_TRUE(WaitFor([&] { return !PlaceholderIn(server_).has_value(); }));
  std::this_thread::sleep_for(500ms);  // the pod still waits (no bind here): on hold, not redone
  EXPECT_FALSE(PlaceholderIn(server_).has_value());
  // It fits new-node and still waits: touched, so that kube-scheduler retries it.
  auto touched = [&] {
    for (const json& p : server_.Pods()) {
      if (p.value("/metadata/name"_json_pointer, "") == "train" &&
          MetadataMap(p, "annotations").contains("gpusched.io/placeholder-node-ready")) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(WaitFor(touched, 15s));
}

TEST_F(PlaceholderControllerTest, the_owner_bound_its_placeholder_is_deleted) {
  auto writer = Replica("only");
  ASSERT_TRUE(WaitFor([&] { return PlaceholderIn(server_).has_value(); }));
  json pod = WaitingPod();
  pod["spec"]["nodeName"] = "old-0";
  pod["status"]["phase"] = "Running";
  server_.UpsertPod(pod);
  EXPECT_TRUE(WaitFor([&] { return !PlaceholderIn(server_).has_value(); }));
}

TEST(PlaceholderCodec, the_pods_own_terms_each_get_the_exclusion_and_nothing_else_changes) {
  PlaceholderPod pod;
  pod.namespace_name = "ml";
  pod.owner_name = "train";
  pod.owner_uid = "u-1";
  pod.copied = DecodePodSchedulingText(R"({"kind":"Pod","metadata":{"uid":"u-1"},"spec":{
    "schedulerName":"gpu-scheduler","affinity":{"nodeAffinity":{
    "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
      {"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":{
      "matchExpressions":[{"key":"z","operator":"Exists"}]}}]}}}})");
  pod.requests =
      ResourceList{{"cpu", 500}, {"memory", 128 * 1024 * 1024 * 1000LL}, {"nvidia.com/gpu", 2000}};
  pod.excluded_nodes = {"n1", "n2"};
  pod.priority_class = "gpusched-placeholder";
  pod.image = "registry.k8s.io/pause:3.10";
  json out = json::parse(EncodePlaceholderPod(pod));
  const json& terms = out["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0]["matchExpressions"].size(), 2u);
  EXPECT_EQ(terms[0]["matchExpressions"][1]["values"], json({"n1", "n2"}));
  EXPECT_EQ(terms[1]["matchFields"][0]["key"], "metadata.name");
  EXPECT_EQ(terms[1]["matchExpressions"][0]["operator"], "NotIn");
  EXPECT_EQ(out["spec"]["affinity"]["nodeAffinity"]
               ["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
            5);
  EXPECT_EQ(out["spec"]["schedulerName"], "gpu-scheduler");
  EXPECT_EQ(out["spec"]["containers"][0]["resources"]["requests"]["cpu"], "500m");
  EXPECT_EQ(out["spec"]["containers"][0]["resources"]["requests"]["memory"], "134217728");
  EXPECT_EQ(out["spec"]["containers"][0]["resources"]["limits"], json({{"nvidia.com/gpu", "2"}}));
  EXPECT_EQ(out["metadata"]["labels"][std::string(kPlaceholderLabel)], "u-1");
  EXPECT_THROW(DecodePodSchedulingText(R"({"kind":"Pod","spec":{"tolerations":{}}})"), DecodeError);
  EXPECT_THROW(DecodePodSchedulingText("[1,2"), DecodeError);
}

}  // namespace
}  // namespace gpusched::placeholder_controller_test
