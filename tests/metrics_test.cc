// /metrics after a known sequence of requests: every event series counts exactly what happened,
// and the state series read the inventory and policy as they are.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/metrics/cluster_series.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/topology.h"
#include "testing/dra_fixtures.h"
#include "testing/test_support.h"

namespace gpusched::metrics_test {
namespace {

// "name{labels} value" lines of an exposition, keyed by everything before the value.
std::map<std::string, double> Parse(const std::string& text) {
  std::map<std::string, double> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

double SumWithPrefix(const std::map<std::string, double>& m, const std::string& prefix) {
  double sum = 0;
  for (const auto& [k, v] : m) {
    if (k.starts_with(prefix)) sum += v;
  }
  return sum;
}

TEST(MetricsEndpoint, counts_a_known_sequence_of_requests_and_reports_the_inventory) {
  testing::SampleServer server;
  httplib::Client c("127.0.0.1", server.port());
  std::string body = testing::Fixture("extender/filter-request-nodecache.json");  // 4 nodes
  ASSERT_EQ(c.Post("/filter", body, "application/json")->status, 200);
  ASSERT_EQ(c.Post("/prioritize", body, "application/json")->status, 200);
  ASSERT_EQ(c.Post("/prioritize", body, "application/json")->status, 200);
  ASSERT_EQ(c.Post("/filter", "{not json", "application/json")->status, 400);

  auto res = c.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_TRUE(res->get_header_value("Content-Type").starts_with("text/plain; version=0.0.4"));
  auto m = Parse(res->body);

  EXPECT_EQ(m["gpusched_extender_requests_total{outcome=\"ok\",verb=\"filter\"}"], 1);
  EXPECT_EQ(m["gpusched_extender_requests_total{outcome=\"ok\",verb=\"prioritize\"}"], 2);
  EXPECT_EQ(m["gpusched_extender_requests_total{outcome=\"bad_request\",verb=\"filter\"}"], 1);
  EXPECT_EQ(
      m["gpusched_extender_request_duration_seconds_count{outcome=\"ok\",verb=\"prioritize\"}"], 2);
  EXPECT_GT(m["gpusched_extender_request_duration_seconds_sum{outcome=\"ok\",verb=\"filter\"}"], 0);
  EXPECT_EQ(m["gpusched_extender_request_nodes_sum{verb=\"filter\"}"], 4);
  EXPECT_EQ(m["gpusched_extender_request_nodes_bucket{verb=\"filter\",le=\"1\"}"], 0);
  EXPECT_EQ(m["gpusched_extender_request_nodes_bucket{verb=\"filter\",le=\"10\"}"], 1);
  // The one rejected node (logging_test: "1x Insufficient nvidia.com/gpu") is gpu-fit's.
  EXPECT_EQ(m["gpusched_filter_rejections_total{class=\"unschedulable\",plugin=\"gpu-fit\"}"], 1);
  EXPECT_EQ(SumWithPrefix(m, "gpusched_filter_rejections_total"), 1);
  EXPECT_EQ(m["gpusched_decisions_total{profile=\"default\",verb=\"filter\"}"], 1);
  EXPECT_EQ(m["gpusched_decisions_total{profile=\"default\",verb=\"prioritize\"}"], 2);

  auto snapshot = testing::SampleSnapshot();
  EXPECT_EQ(m["gpusched_inventory_nodes"], static_cast<double>(snapshot->size()));
  EXPECT_EQ(m["gpusched_inventory_synced"], 1);
  double bound_pods = 0;
  double gpu_pods = 0;
  for (const auto& node : snapshot->nodes()) {
    bound_pods += node->pod_count;
    gpu_pods += node->gpu_pod_count;
  }
  EXPECT_GT(gpu_pods, 0);
  EXPECT_EQ(m["gpusched_inventory_bound_pods"], bound_pods);
  EXPECT_EQ(m["gpusched_inventory_gpu_pods"], gpu_pods);
  EXPECT_EQ(m["gpusched_policy_info{digest=\"built-in\"}"], 1);
  EXPECT_EQ(m["gpusched_policy_reloads_total{result=\"failed\"}"], 0);
  double gpus = 0;
  double used = 0;
  for (const auto& node : snapshot->nodes()) {
    gpus += static_cast<double>(node->info.allocatable.milli(kGpuResource)) / 1000;
    used += static_cast<double>(node->used.milli(kGpuResource)) / 1000;
  }
  ASSERT_GT(gpus, 0);
  double capacity = 0;
  double allocated = 0;
  for (const auto& [k, v] : m) {
    if (k.find("resource=\"nvidia.com/gpu\"") == std::string::npos) continue;
    if (k.starts_with("gpusched_cluster_gpu_capacity{")) capacity += v;
    if (k.starts_with("gpusched_cluster_gpu_allocated{")) allocated += v;
  }
  EXPECT_EQ(capacity, gpus);
  EXPECT_EQ(allocated, used);
  EXPECT_TRUE(m.count("gpusched_cluster_gpu_fragmentation_ratio"));
  EXPECT_EQ(m["gpusched_build_info{version=\"" GPUSCHED_VERSION "\"}"], 1);
}

TEST(MetricsEndpoint, not_ready_requests_are_counted_as_such) {
  Metrics metrics;
  metrics.ObserveRequest("filter", "not_ready", 0.001, 0);
  auto m = Parse(metrics.Scrape());
  EXPECT_EQ(m["gpusched_extender_requests_total{outcome=\"not_ready\",verb=\"filter\"}"], 1);
  EXPECT_FALSE(m.count("gpusched_inventory_nodes"));  // no collector: no state series
}

// A producer's collector writes its families at each scrape, after the event series: a counter
// shows the total it is given, a gauge its value, and a family without a sample is left out.
TEST(MetricsCollectors, write_their_series_at_each_scrape) {
  Metrics metrics;
  double level = 1;
  metrics.AddCollector([&](SeriesWriter& out) {
    out.Gauge("test_level", "a level").Add({{"kind", "a"}}, level);
    out.Counter("test_events_total", "events so far").Add({}, 3);
    out.Gauge("test_unwritten", "no sample");
  });
  auto first = Parse(metrics.Scrape());
  EXPECT_EQ(first["test_level{kind=\"a\"}"], 1);
  EXPECT_EQ(first["test_events_total"], 3);
  level = 2;
  std::string text = metrics.Scrape();
  EXPECT_EQ(Parse(text)["test_level{kind=\"a\"}"], 2);
  EXPECT_NE(text.find("# HELP test_level a level\n# TYPE test_level gauge\n"), std::string::npos);
  EXPECT_EQ(text.find("test_unwritten"), std::string::npos);
}

// Free GPUs per topology domain: one series per domain with the most free GPUs, at most 32 per
// level, the rest summed as "other"; domains named by their label value.
TEST(ClusterSeries, free_gpus_per_domain_are_bounded_per_level) {
  std::vector<NodeState> nodes;
  double all = 0;
  for (int r = 0; r < 40; ++r) {
    // Rack r: one node of 64 GPUs, r of them in use.
    NodeState n = testing::MakeNode("n-" + std::to_string(r),
                                    ResourceList{{"nvidia.com/gpu", testing::Units(64)}},
                                    ResourceList{{"nvidia.com/gpu", testing::Units(r)}});
    const std::string rack = "rack-" + std::to_string(r);
    n.info.topology = PinLabels::Keep(
        std::vector<std::pair<std::string_view, std::string_view>>{
            {"network.topology.nvidia.com/leaf", rack}, {"topology.kubernetes.io/zone", "z1"}},
        IsTopologyLabel);
    nodes.push_back(std::move(n));
    all += 64 - r;
  }
  auto snapshot = testing::SnapshotOf(nodes);
  Metrics metrics;
  metrics.AddCollector([&](SeriesWriter& out) { WriteClusterSeries(*snapshot, out); });
  auto m = Parse(metrics.Scrape());
  auto series = [](const std::string& domain, const std::string& level) {
    return "gpusched_topology_domain_free_gpus{domain=\"" + domain + "\",level=\"" + level + "\"}";
  };
  EXPECT_EQ(m[series("rack-0", "rack")], 64);
  EXPECT_EQ(m[series("rack-31", "rack")], 33);
  EXPECT_EQ(m.count(series("rack-32", "rack")), 0u);
  double other = 0;
  for (int r = 32; r < 40; ++r) other += 64 - r;
  EXPECT_EQ(m[series("other", "rack")], other);
  EXPECT_EQ(SumWithPrefix(m, "gpusched_topology_domain_free_gpus{domain=\"rack-"), all - other);
  EXPECT_EQ(m[series("z1", "zone")], all);
}

// Issue #48: what the DRA state holds is metered against its bounds, from 0 without DRA objects.
TEST(ClusterSeries, the_dra_state_is_metered) {
  {
    auto empty = testing::SnapshotOf({});
    Metrics metrics;
    metrics.AddCollector([&](SeriesWriter& out) { WriteClusterSeries(*empty, out); });
    auto m = Parse(metrics.Scrape());
    ASSERT_EQ(m.count("gpusched_dra_claim_bytes"), 1u);
    EXPECT_EQ(m["gpusched_dra_devices"], 0);
  }
  using namespace testing::dra;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("a100-1"));
  ledger.UpsertNode(BareNode("h100-1"));
  ledger.dra().Upsert(Slice("a100-1", Gpus(8)));
  ledger.dra().Upsert(Slice("h100-1", Gpus(8, "NVIDIA H100 80GB HBM3")));
  ledger.dra().Upsert(GpuClass());
  ledger.dra().Upsert(Claim("one", 1));
  ledger.dra().Upsert(Allocated(Claim("two", 2), "a100-1", {"gpu-0", "gpu-1"}));
  auto snapshot = ledger.BuildSnapshot();
  Metrics metrics;
  metrics.AddCollector([&](SeriesWriter& out) { WriteClusterSeries(*snapshot, out); });
  auto m = Parse(metrics.Scrape());
  EXPECT_EQ(m["gpusched_dra_devices"], 16);
  EXPECT_EQ(m["gpusched_dra_device_kinds"], 2);
  EXPECT_EQ(m["gpusched_dra_claims"], 2);
  EXPECT_EQ(m["gpusched_dra_claim_bytes"], static_cast<double>(ledger.dra().claim_bytes()));
  EXPECT_GT(m["gpusched_dra_claim_bytes"], 0);
}

}  // namespace
}  // namespace gpusched::metrics_test
