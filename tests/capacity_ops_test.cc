// GET /capacity on the ops listener and the gpusched_capacity_* gauges: the JSON equals the
// capacity library's report of the serving snapshot, only the ops listener serves it, the gauges
// carry the report's figures, and the report is computed on the app's background worker, never
// because a request (to /capacity or a verb) came in.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gpusched/app/reports_worker.h"
#include "gpusched/app/server_app.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/policy/policy.h"
#include "testing/test_support.h"

namespace gpusched::capacity_ops_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// An inventory the test publishes into and declares ready when it wants.
class TestSource : public InventorySource {
 public:
  explicit TestSource(std::shared_ptr<const ClusterSnapshot> first) : snapshots_(first) {}
  const Published<ClusterSnapshot>& snapshots() const override { return snapshots_; }
  Readiness readiness() const override { return Readiness{ready.load(), !ready.load(), "test"}; }
  void WriteSeries(SeriesWriter&) const override {}
  AssumptionSink* assumptions() override { return nullptr; }
  const std::string& description() const override { return description_; }

  Published<ClusterSnapshot> snapshots_;
  std::atomic<bool> ready{false};

 private:
  std::string description_ = "capacity test";
};

// The sample cluster's nodes as a snapshot of generation `generation`, without the nodes whose
// GPU product starts with `drop_product` (when not empty).
std::shared_ptr<const ClusterSnapshot> SampleAt(uint64_t generation,
                                                const std::string& drop_product = "") {
  auto sample = testing::SampleSnapshot();
  std::vector<ClusterSnapshot::NodePtr> nodes;
  for (const auto& n : sample->nodes()) {
    if (!drop_product.empty() && n->info.gpu.product.starts_with(drop_product)) continue;
    nodes.push_back(n);
  }
  return std::make_shared<const ClusterSnapshot>(std::move(nodes), generation);
}

// A ServerApp with an ops listener over a TestSource; its listeners run until destroyed.
class OpsApp {
 public:
  explicit OpsApp(std::chrono::milliseconds report_interval,
                  std::shared_ptr<const ClusterSnapshot> first = SampleAt(1),
                  bool reports_listener = false) {
    auto source = std::make_unique<TestSource>(std::move(first));
    source_ = source.get();
    ServerAppOptions options;
    options.server.port = 0;
    options.ops = ServerOptions{};
    options.ops->port = 0;
    options.ops->serve_verbs = false;
    if (reports_listener) {
      options.reports = ServerOptions{};
      options.reports->port = 0;
      options.reports->serve_verbs = false;
    }
    options.report_interval = report_interval;
    policy_ = std::make_shared<const Policy>(DefaultPolicySpec());
    app_ = std::make_unique<ServerApp>(options, policy_, std::move(source));
    port_ = app_->Bind();
    thread_ = std::thread([this] { app_->Run(); });
  }
  ~OpsApp() {
    app_->Stop();
    thread_.join();
  }
  TestSource& source() { return *source_; }
  ServerApp& app() { return *app_; }
  const Policy& policy() const { return *policy_; }
  httplib::Client Verbs() { return Client(port_); }
  httplib::Client Ops() { return Client(app_->ops_port()); }
  httplib::Client Reports() { return Client(app_->reports_port()); }

  // Reports of each kind the worker has published: the fewer of capacity and why-pending.
  uint64_t Computations() const {
    return std::min(app_->reports_worker()->capacity_reports(),
                    app_->reports_worker()->why_pending_reports());
  }
  // Waits (at most 20 s) until the worker has made `n` reports of each kind.
  bool AwaitComputations(uint64_t n) {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (Computations() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

 private:
  static httplib::Client Client(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
  TestSource* source_ = nullptr;
  std::shared_ptr<const Policy> policy_;
  std::unique_ptr<ServerApp> app_;
  int port_ = 0;
  std::thread thread_;
};

// The library's report of `snapshot`, as `gpusched capacity --json` prints it.
json Expected(const Policy& policy, const ClusterSnapshot& snapshot) {
  CapacityReport report = ComputeCapacity(policy, snapshot);
  report.inventory = "capacity test";
  return json::parse(FormatCapacityJson(report));
}

// {"series{labels}": value} of the gpusched_capacity_* lines of an exposition.
std::map<std::string, double> CapacitySeries(const std::string& exposition) {
  std::map<std::string, double> out;
  std::regex line(R"((gpusched_capacity_\w+\{[^}]*\}) (\S+))");
  for (std::sregex_iterator it(exposition.begin(), exposition.end(), line), end; it != end; ++it) {
    out[(*it)[1]] = std::stod((*it)[2]);
  }
  return out;
}

TEST(CapacityRoute, answers_503_before_the_first_report_then_the_library_json_of_the_snapshot) {
  OpsApp ops(1h);
  auto c = ops.Ops();
  auto early = c.Get("/capacity");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 503);
  EXPECT_TRUE(json::parse(early->body).contains("error")) << early->body;
  EXPECT_EQ(early->body.find('\n'), std::string::npos);  // one line
  EXPECT_EQ(ops.Computations(), 0u);                     // not ready: nothing computed
  // No gauges before the first report.
  EXPECT_TRUE(CapacitySeries(c.Get("/metrics")->body).empty());

  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  auto res = c.Get("/capacity");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json; charset=utf-8");
  json got = json::parse(res->body);
  EXPECT_EQ(got["snapshotGeneration"], 1);
  EXPECT_GE(got["ageSeconds"].get<double>(), 0);
  got.erase("snapshotGeneration");
  got.erase("ageSeconds");
  EXPECT_EQ(got, Expected(ops.policy(), *ops.source().snapshots().Get()));
  // Pod groups per topology domain, for the default group shapes.
  ASSERT_EQ(got["topology"].size(), DefaultTopologyLevels().size());
  EXPECT_EQ(got["topology"][0]["groups"].size(), DefaultGroupShapes().size());
  EXPECT_EQ(c.Head("/capacity")->status, 200);
  EXPECT_EQ(c.Post("/capacity", "", "application/json")->status, 405);
}

TEST(CapacityRoute, the_verbs_listener_does_not_serve_it) {
  OpsApp ops(1h);
  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  auto v = ops.Verbs();
  auto res = v.Get("/capacity");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(ops.Ops().Get("/capacity")->status, 200);
  // The gauges are in /metrics on both listeners (one Metrics), the route on one only.
  EXPECT_FALSE(CapacitySeries(v.Get("/metrics")->body).empty());
}

// With --reports-listen the reports that name pods and namespaces leave the ops port (which
// Prometheus and the probes reach) for a port of their own (issue #37).
TEST(CapacityRoute, a_reports_listener_takes_the_reports_off_the_ops_port) {
  OpsApp ops(1h, SampleAt(1), /*reports_listener=*/true);
  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  ASSERT_NE(ops.app().reports_port(), 0);
  auto r = ops.Reports();
  for (const char* path : {"/capacity", "/why-pending"}) {
    auto on_reports = r.Get(path);
    ASSERT_TRUE(on_reports) << path;
    EXPECT_EQ(on_reports->status, 200) << path;
    EXPECT_EQ(ops.Ops().Get(path)->status, 404) << path;
    EXPECT_EQ(ops.Verbs().Get(path)->status, 404) << path;
  }
  EXPECT_EQ(ops.Ops().Get("/healthz")->status, 200);
  EXPECT_EQ(ops.Ops().Get("/metrics")->status, 200);
  EXPECT_EQ(r.Get("/metrics")->status, 404);  // the reports' port serves the reports alone
  EXPECT_EQ(json::parse(r.Get("/capacity")->body)["snapshotGeneration"], 1);
}

TEST(CapacityRoute, no_ops_listener_means_no_worker) {
  testing::SampleServer server;  // verbs only, as most tests and benchmarks run it
  httplib::Client c("127.0.0.1", server.port());
  EXPECT_EQ(c.Get("/capacity")->status, 404);
  EXPECT_TRUE(CapacitySeries(c.Get("/metrics")->body).empty());
}

TEST(CapacityGauges, carry_the_reports_figures_per_product_and_shape) {
  OpsApp ops(1h);
  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  auto series = CapacitySeries(ops.Ops().Get("/metrics")->body);
  CapacityReport report = ComputeCapacity(ops.policy(), *ops.source().snapshots().Get());
  ASSERT_LE(report.products.size(), kMaxGaugeProducts);  // every product by name
  size_t expected_series = 0;
  for (const auto& [product, g] : report.products) {
    std::string p = "product=\"" + product + "\"";
    EXPECT_DOUBLE_EQ(series.at("gpusched_capacity_gpus{" + p + ",state=\"total\"}"), g.gpus.total);
    EXPECT_DOUBLE_EQ(series.at("gpusched_capacity_gpus{" + p + ",state=\"allocated\"}"),
                     g.gpus.allocated);
    EXPECT_DOUBLE_EQ(series.at("gpusched_capacity_gpus{" + p + ",state=\"idle\"}"), g.gpus.idle);
    EXPECT_DOUBLE_EQ(series.at("gpusched_capacity_gpus{" + p + ",state=\"fragmented\"}"),
                     g.gpus.fragmented);
    for (size_t s = 0; s < report.shapes.size(); ++s) {
      EXPECT_EQ(
          series.at("gpusched_capacity_fits{" + p + ",shape=\"" + report.shapes[s].name + "\"}"),
          static_cast<double>(g.fits[s]))
          << product << " " << report.shapes[s].name;
    }
    expected_series += 4 + report.shapes.size();
  }
  EXPECT_EQ(series.size(), expected_series);
  // The sample has an 8-GPU fit somewhere: the gauges are not all zero.
  double gpu8 = 0;
  for (const auto& [k, v] : series) gpu8 += k.find("shape=\"gpu-8\"") != std::string::npos ? v : 0;
  EXPECT_EQ(gpu8, static_cast<double>(report.cluster.fits[3]));
}

TEST(CapacityGauges, products_past_the_bound_are_summed_as_other) {
  auto snapshot = SampleAt(1);
  Policy policy(DefaultPolicySpec());
  CapacityReport report = ComputeCapacity(policy, *snapshot);
  ASSERT_GT(report.products.size(), 3u);
  std::vector<GaugeRow> gpus, fits;
  CapacityGaugesOf(report, gpus, fits, 2);
  std::map<std::string, double> total;
  std::map<std::string, double> fits_by_product;
  for (const auto& v : gpus) {
    if (v.label == "total") total[v.group] += v.value;
  }
  for (const auto& v : fits) fits_by_product[v.group] += v.value;
  EXPECT_EQ(total.size(), 3u);  // two products and other
  ASSERT_TRUE(total.count("other"));
  double cluster_total = 0;
  for (const auto& [p, t] : total) cluster_total += t;
  EXPECT_NEAR(cluster_total, report.cluster.gpus.total, 1e-6);
  double cluster_fits = 0;
  for (int64_t f : report.cluster.fits) cluster_fits += static_cast<double>(f);
  double gauge_fits = 0;
  for (const auto& [p, f] : fits_by_product) gauge_fits += f;
  EXPECT_EQ(gauge_fits, cluster_fits);
  // The two kept are the two with the most GPUs.
  for (const auto& [p, t] : total) {
    if (p == "other") continue;
    for (const auto& [q, g] : report.products) {
      if (!total.count(q)) {
        EXPECT_GE(t, g.gpus.total) << p << " vs " << q;
      }
    }
  }
}

// The report is the worker's: a new snapshot inside the throttle interval changes nothing, however
// many /capacity and verb requests arrive; /capacity keeps serving the cached generation.
TEST(ReportsWorkerThrottle, requests_never_trigger_a_computation) {
  OpsApp ops(1h);
  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  ops.source().snapshots_.Set(SampleAt(2));
  auto o = ops.Ops();
  auto v = ops.Verbs();
  std::string body = testing::Fixture("extender/filter-request-nodecache.json");
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(v.Post("/filter", body, "application/json")->status, 200);
    ASSERT_EQ(v.Post("/prioritize", body, "application/json")->status, 200);
    auto res = o.Get("/capacity");
    ASSERT_EQ(res->status, 200);
    EXPECT_EQ(json::parse(res->body)["snapshotGeneration"], 1);
  }
  std::this_thread::sleep_for(600ms);  // a few of the worker's polls
  EXPECT_EQ(ops.app().reports_worker()->capacity_reports(), 1u);
  EXPECT_EQ(ops.app().reports_worker()->why_pending_reports(), 1u);
  EXPECT_EQ(json::parse(o.Get("/capacity")->body)["snapshotGeneration"], 1);
}

// With a short interval a new generation is picked up, and a product that vanished from the
// inventory vanishes from the gauges.
TEST(ReportsWorkerThrottle, follows_new_generations_and_drops_vanished_products) {
  OpsApp ops(50ms);
  ops.source().ready = true;
  ASSERT_TRUE(ops.AwaitComputations(1));
  auto o = ops.Ops();
  EXPECT_NE(o.Get("/metrics")->body.find("product=\"Tesla-V100"), std::string::npos);
  // Unchanged generation: no new report, however short the interval.
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(ops.app().reports_worker()->capacity_reports(), 1u);
  EXPECT_EQ(ops.app().reports_worker()->why_pending_reports(), 1u);
  auto without_v100 = SampleAt(2, "Tesla-V100");
  ops.source().snapshots_.Set(without_v100);
  ASSERT_TRUE(ops.AwaitComputations(2));
  json got = json::parse(o.Get("/capacity")->body);
  EXPECT_EQ(got["snapshotGeneration"], 2);
  got.erase("snapshotGeneration");
  got.erase("ageSeconds");
  EXPECT_EQ(got, Expected(ops.policy(), *without_v100));
  EXPECT_EQ(o.Get("/metrics")->body.find("product=\"Tesla-V100"), std::string::npos);
}

}  // namespace
}  // namespace gpusched::capacity_ops_test
