// Issue #48: no silent cap on DRA objects. What the decoder refuses past a bound and what the
// ledger refuses past its cap is counted by reason, as gpusched_inventory_objects_skipped_total
// reports it, and logged once per reason.
#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include "gpusched/dra/dra_ledger.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/kube/refusal_counts.h"
#include "gpusched/server/logging.h"
#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::dra_refusals_test {
namespace {

using namespace std::chrono_literals;

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(RefusalCounts, counts_by_reason_and_warns_once_per_reason) {
  std::ostringstream log;
  ConfigureLogging(LogFormat::kText, spdlog::level::info,
                   std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  RefusalCounts refused("/apis/resource.k8s.io/v1/resourceslices", {"dra_slice_cap"});
  EXPECT_EQ(refused.counts().at("dra_slice_cap"), 0u);
  for (int i = 0; i < 1000; ++i) refused.Add("dra_slice_cap", "slice s", "full");
  refused.Add("dra_devices_per_slice", "a listed object", "more than 128 entries", 2);
  ConfigureLogging(LogFormat::kText, spdlog::level::info);
  EXPECT_EQ(refused.counts().at("dra_slice_cap"), 1000u);
  EXPECT_EQ(refused.counts().at("dra_devices_per_slice"), 2u);
  EXPECT_EQ(Occurrences(log.str(), "refused"), 2u) << log.str();
  EXPECT_EQ(Occurrences(log.str(), "dra_slice_cap"), 1u) << log.str();
}

nlohmann::json Object(const std::string& name, nlohmann::json spec) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}}}, {"spec", std::move(spec)}};
}

nlohmann::json Slice(const std::string& name, size_t devices) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < devices; ++i) list.push_back({{"name", "gpu-" + std::to_string(i)}});
  return Object(name, {{"driver", "gpu.nvidia.com"},
                       {"nodeName", name},
                       {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                       {"devices", list}});
}

// The count of `reason` among `kind`'s refusals; -1 when the reason is not reported.
int64_t Refused(const LiveInventory& inventory, std::string_view kind, std::string_view reason) {
  for (const auto& [name, skips] : inventory.dra_skips()) {
    auto it = skips.refused.find(reason);
    if (name == kind && it != skips.refused.end()) return static_cast<int64_t>(it->second);
  }
  return -1;
}

template <class F>
bool Eventually(F condition) {
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(5ms)) {
    if (condition()) return true;
  }
  return condition();
}

// Through the live inventory: DeviceClasses past DraClassKind::kMax, listed and then watched,
// and a slice past the devices a slice may publish, each under its reason.
TEST(DraRefusals, the_live_inventory_counts_what_the_decoder_and_the_ledger_refuse) {
  testing::FakeApiServer server;
  server.UpsertNode(testing::MakeGpuNode("node-0", 8));
  const std::string classes = "/apis/resource.k8s.io/v1/deviceclasses";
  const std::string slices = "/apis/resource.k8s.io/v1/resourceslices";
  for (size_t i = 0; i <= DraClassKind::kMax; ++i) {
    server.UpsertObject(classes, Object("class-" + std::to_string(i), nlohmann::json::object()));
  }
  server.UpsertObject(slices, Slice("too-many-devices", kMaxDraDevicesPerSlice + 1));
  server.UpsertObject(slices, Slice("clean", 8));
  KubeConfig config;
  config.server = server.url();
  config.token = testing::FakeApiServer::kToken;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, testing::FastLiveOptions());
  EXPECT_TRUE(Eventually([&] { return Refused(inventory, "deviceclass", "dra_class_cap") == 1; }));
  EXPECT_TRUE(Eventually(
      [&] { return Refused(inventory, "resourceslice", "dra_devices_per_slice") == 1; }));
  EXPECT_EQ(Refused(inventory, "resourceslice", "dra_slice_cap"), 0);  // declared, never met
  EXPECT_EQ(Refused(inventory, "resourceclaim", "dra_claim_cap"), 0);
  server.UpsertObject(classes, Object("class-late", nlohmann::json::object()));
  EXPECT_TRUE(Eventually([&] { return Refused(inventory, "deviceclass", "dra_class_cap") == 2; }));
  for (const auto& [kind, skips] : inventory.dra_skips()) EXPECT_EQ(skips.invalid, 0u) << kind;
}

}  // namespace
}  // namespace gpusched::dra_refusals_test
