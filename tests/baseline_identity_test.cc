// The production request path and the straightforward one the benchmarks compare it with give the
// same answers on the benchmark workload (on a smaller cluster): the codec against the nlohmann
// DOM baseline, and the engine judging one node per content class against judging every node.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "baseline_codec.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/policy/policy.h"
#include "testing/test_support.h"
#include "workload.h"

namespace gpusched::baseline_identity_test {
namespace {

// The rounds of the randomized comparisons below: all in the Release build, the first under the
// sanitizers (at -O0 each round takes tens of seconds; one shows any memory error as well).
#ifdef GPUSCHED_SANITIZED
constexpr size_t kRounds = 1;
#else
constexpr size_t kRounds = 2;
#endif

TEST(BaselineIdentity, fast_and_baseline_paths_answer_identically) {
  constexpr double kOccupancy[] = {0.9, 0.5};
  for (size_t round = 0; round < kRounds; ++round) {
    double occupancy = kOccupancy[round];
    bench::Workload w = bench::MakeWorkload(300, occupancy, 7);
    Published<ClusterSnapshot> snapshots(w.snapshot);
    Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
    ExtenderService service(snapshots, policies);
    for (const std::string* request : {&w.names_request, &w.nodes_request}) {
      ExtenderArgs fast = DecodeExtenderArgs(*request);
      ExtenderArgs slow = baseline::DecodeExtenderArgs(*request);
      std::string fast_filter = EncodeExtenderFilterResult(service.Filter(fast));
      std::string slow_filter = baseline::EncodeExtenderFilterResult(service.Filter(slow));
      EXPECT_EQ(nlohmann::json::parse(fast_filter), nlohmann::json::parse(slow_filter));
      std::string fast_prio = EncodeHostPriorityList(service.Prioritize(fast));
      std::string slow_prio = baseline::EncodeHostPriorityList(service.Prioritize(slow));
      EXPECT_EQ(fast_prio, slow_prio);  // byte for byte
      if (request == &w.names_request) {
        EXPECT_EQ(fast_filter, slow_filter);  // byte for byte in names mode
      }
      // The workload is not trivial: some nodes pass and some fail.
      auto parsed = nlohmann::json::parse(fast_filter);
      EXPECT_FALSE(parsed["FailedNodes"].empty() && parsed["FailedAndUnresolvableNodes"].empty());
    }
  }
}

// Every registered plugin on, each that scores with weight 1.
PolicySpec AllPlugins() {
  PolicySpec spec = DefaultPolicySpec();
  for (std::string_view name : RegisteredPlugins()) {
    spec.profiles[0].plugins[std::string(name)].enabled = true;
    spec.profiles[0].plugins[std::string(name)].weight = FindPlugin(name)->extends.score ? 1 : 0;
  }
  return spec;
}

void ExpectSameEvaluation(const NodeEvaluation& a, const NodeEvaluation& b, const std::string& at) {
  EXPECT_EQ(a.verdict.code, b.verdict.code) << at;
  EXPECT_EQ(a.verdict.reason, b.verdict.reason) << at;
  EXPECT_EQ(a.rejected_by, b.rejected_by) << at;
  ASSERT_EQ(a.scores.size(), b.scores.size()) << at;
  for (size_t k = 0; k < a.scores.size(); ++k) {
    EXPECT_EQ(a.scores[k].plugin, b.scores[k].plugin) << at;
    EXPECT_EQ(a.scores[k].score, b.scores[k].score) << at << " " << a.scores[k].plugin;
  }
  EXPECT_EQ(a.combined, b.combined) << at;
  EXPECT_EQ(a.score, b.score) << at;
}

// The benchmark cluster with each node's usage of each resource drawn anew, so classes mix
// products and usage levels and scores differ between them.
std::shared_ptr<const ClusterSnapshot> VariedUsage(const ClusterSnapshot& base, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<ClusterSnapshot::NodePtr> nodes;
  for (const auto& n : base.nodes()) {
    NodeState copy = *n;
    copy.used = {};
    // cpu, memory and pods: none or half of each (one draw for all three), so nodes still share
    // classes.
    const int64_t quarters = 2 * std::uniform_int_distribution<int64_t>(0, 1)(random);
    for (const auto& r : copy.info.allocatable) {
      int64_t units = r.milli / 1000;
      if (r.name.find('/') == std::string::npos) {
        copy.used.Set(r.name, r.milli / 4 * quarters);
        continue;
      }
      copy.used.Set(r.name, 1000 * std::uniform_int_distribution<int64_t>(0, units)(random));
    }
    copy.used.DropZeros();
    nodes.push_back(std::make_shared<const NodeState>(std::move(copy)));
  }
  return std::make_shared<const ClusterSnapshot>(SnapshotParts{
      .nodes = std::move(nodes),
      .generation = 2,
      .observed_workload =
          ObservedWorkload{LiveTargetWorkload(base.observed(), base.standard_workload(), {}), 1}});
}

TEST(ContentClasses, judging_one_node_per_class_gives_every_node_its_own_answer) {
  using testing::Units;
  // Some ask for CPU, so fgd's and cpu-reserve's CPU terms tell nodes of one GPU class apart.
  const std::vector<ResourceList> pods = {
      {{"nvidia.com/gpu", Units(1)}},
      {{"nvidia.com/gpu", Units(2)}},
      {{"nvidia.com/gpu", Units(8)}},
      {{"nvidia.com/gpu.shared", Units(1)}},
      {{"nvidia.com/mig-1g.5gb", Units(1)}},
      {{"nvidia.com/mig-3g.20gb", Units(1)}},
      {{"nvidia.com/gpu", Units(1)}, {"cpu", Units(12)}},
      {{"nvidia.com/gpu", Units(2)}, {"cpu", Units(40)}},
  };
  Policy policy(AllPlugins());
  for (uint64_t seed = 11; seed < 11 + kRounds; ++seed) {
    bench::Workload w = bench::MakeWorkload(300, 0.5, seed);
    auto varied = VariedUsage(*w.snapshot, seed);
    const ClusterSnapshot& snapshot = *varied;
    // Fewer than half as many classes as nodes, so the classes are really shared.
    EXPECT_LT(snapshot.class_count() * 2, snapshot.size());
    EXPECT_GT(snapshot.class_count(), 20u);
    std::vector<const NodeState*> nodes;
    for (const auto& n : snapshot.nodes()) nodes.push_back(n.get());
    std::vector<std::string_view> names;
    for (const auto* n : nodes) names.push_back(n->info.name);
    Candidates by_class{nodes, snapshot.classes(), snapshot.class_count(), names, {}};
    size_t passed = 0;
    size_t failed = 0;
    std::set<int64_t> cpu_reserve_scores;
    for (const auto& requests : pods) {
      PodInfo pod = testing::MakePod("p", requests);
      Policy::Judgement judged = policy.Judge(pod, snapshot);
      std::vector<NodeEvaluation> grouped = judged.engine().Evaluate(*judged.cycle, by_class);
      std::vector<NodeEvaluation> each = judged.engine().Evaluate(*judged.cycle, nodes);
      ASSERT_EQ(grouped.size(), each.size());
      for (size_t i = 0; i < each.size(); ++i) {
        ExpectSameEvaluation(grouped[i], each[i], nodes[i]->info.name);
        (each[i].verdict.passed() ? passed : failed) += 1;
        for (const PluginScore& s : each[i].scores) {
          if (s.plugin == "cpu-reserve") cpu_reserve_scores.insert(std::llround(s.score));
        }
      }
      EXPECT_EQ(judged.engine().Prioritize(*judged.cycle, by_class),
                judged.engine().Prioritize(*judged.cycle, nodes));
    }
    // cpu-reserve told nodes apart.
    EXPECT_GT(cpu_reserve_scores.size(), 3u);
    EXPECT_GT(passed, 100u);
    EXPECT_GT(failed, 100u);
  }
}

}  // namespace
}  // namespace gpusched::baseline_identity_test
