#include "gpusched/engine/engine.h"

#include <gtest/gtest.h>

#include "gpusched/policy/engine_builder.h"
#include "gpusched/util/input_error.h"
#include "testing/test_support.h"

namespace gpusched::engine_test {
namespace {

using testing::Units;

// Rejects nodes whose name is in `reject`; scores each node by a fixed table.
// Judges a node by its content, as the plugin contract requires: its GPU product, which these
// tests set to a distinct value per node (ContentNode), so each node is a class of its own.
// Verdicts and scores by product, and whether Normalize inverts the scores: what the test plugins
// below answer at the extension points each implements.
class FakeJudge : public Plugin {
 public:
  FakeJudge(std::string name, std::map<std::string, Verdict> verdicts,
            std::map<std::string, double> scores, bool invert_on_normalize = false)
      : name_(std::move(name)),
        verdicts_(std::move(verdicts)),
        scores_(std::move(scores)),
        invert_(invert_on_normalize) {}
  std::string_view name() const override { return name_; }

 protected:
  Verdict VerdictOf(const NodeState& n) const {
    auto it = verdicts_.find(n.info.gpu.product);
    return it == verdicts_.end() ? Verdict::Pass() : it->second;
  }
  double ScoreOf(const NodeState& n) const {
    auto it = scores_.find(n.info.gpu.product);
    return it == scores_.end() ? 0 : it->second;
  }
  void Invert(std::span<double> scores) const {
    if (!invert_) return;
    for (double& s : scores) s = kMaxNodeScore - s;
  }

 private:
  std::string name_;
  std::map<std::string, Verdict> verdicts_;
  std::map<std::string, double> scores_;
  bool invert_;
};

class FakePlugin : public FakeJudge, public FilterPlugin, public ScorePlugin {
 public:
  using FakeJudge::FakeJudge;
  Verdict Filter(const Cycle&, const NodeState& n) const override { return VerdictOf(n); }
  double Score(const Cycle&, const NodeState& n) const override { return ScoreOf(n); }
  void Normalize(const Cycle&, std::span<double> scores) const override { Invert(scores); }
};

// A node whose GPU product is its name: what FakePlugin judges.
NodeState ContentNode(const std::string& name) {
  NodeState n = testing::MakeNode(name, ResourceList{{"nvidia.com/gpu", Units(8)}});
  n.info.gpu.product = name;
  return n;
}

struct EngineFixture : ::testing::Test {
  NodeState a = ContentNode("a");
  NodeState b = ContentNode("b");
  NodeState c = ContentNode("c");
  std::vector<const NodeState*> nodes{&a, &b, &c};
  ClusterSnapshot snapshot{{}, 1};
  PodInfo gpu_pod = testing::MakePod("p", ResourceList{{"nvidia.com/gpu", Units(1)}});
  PodInfo cpu_pod = testing::MakePod("q", ResourceList{{"cpu", Units(1)}});

  static Engine Make(std::vector<WeightedPlugin> plugins, EngineOptions options = {}) {
    return Engine(GpuResourceNames(), std::move(plugins), options);
  }
  static constexpr EngineOptions kGpuPodsOnly{.gpu_pods_only = true};
};

TEST_F(EngineFixture, unresolvable_verdicts_win_over_earlier_unschedulable_ones) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<FakePlugin>(
           "one", std::map<std::string, Verdict>{{"b", Verdict::Unschedulable("one")}},
           std::map<std::string, double>{}),
       0});
  plugins.push_back({std::make_unique<FakePlugin>(
                         "two",
                         std::map<std::string, Verdict>{{"b", Verdict::Unresolvable("two")},
                                                        {"c", Verdict::Unresolvable("two")}},
                         std::map<std::string, double>{}),
                     0});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  auto v = engine.Filter(*cycle, nodes);
  EXPECT_TRUE(v[0].passed());
  EXPECT_EQ(v[1].code, VerdictCode::kUnresolvable);  // "one" said unschedulable first
  EXPECT_EQ(v[1].reason, "two");
  EXPECT_EQ(v[2].code, VerdictCode::kUnresolvable);
  EXPECT_EQ(v[2].reason, "two");
}

// A FakeJudge that scores and does not filter: its verdicts must never reach a node.
class ScoreOnlyPlugin : public FakeJudge, public ScorePlugin {
 public:
  using FakeJudge::FakeJudge;
  double Score(const Cycle&, const NodeState& n) const override { return ScoreOf(n); }
};

TEST_F(EngineFixture, plugins_that_declare_no_filter_are_not_asked_and_rejections_name_the_filter) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<ScoreOnlyPlugin>(
           "scores", std::map<std::string, Verdict>{{"a", Verdict::Unschedulable("x")}},
           std::map<std::string, double>{}),
       1});
  plugins.push_back(
      {std::make_unique<FakePlugin>(
           "filters", std::map<std::string, Verdict>{{"b", Verdict::Unschedulable("filters")}},
           std::map<std::string, double>{}),
       0});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  std::vector<std::string_view> rejected_by;
  auto v = engine.Filter(*cycle, nodes, &rejected_by);
  EXPECT_TRUE(v[0].passed());
  EXPECT_EQ(v[1].reason, "filters");
  EXPECT_EQ(rejected_by[1], "filters");  // the plugin's own index, not its place among filters
  EXPECT_TRUE(v[2].passed());
}

// A FakeJudge that filters and does not score: whatever its weight, it never enters a node's
// weighted mean.
class FilterOnlyPlugin : public FakeJudge, public FilterPlugin {
 public:
  using FakeJudge::FakeJudge;
  Verdict Filter(const Cycle&, const NodeState& n) const override { return VerdictOf(n); }
};

TEST_F(EngineFixture, plugins_that_declare_no_score_are_not_scored_whatever_their_weight) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back({std::make_unique<FilterOnlyPlugin>(
                         "filters", std::map<std::string, Verdict>{},
                         std::map<std::string, double>{{"a", 100}, {"b", 100}, {"c", 100}}),
                     50});
  plugins.push_back(
      {std::make_unique<FakePlugin>("scores", std::map<std::string, Verdict>{},
                                    std::map<std::string, double>{{"a", 80}, {"b", 40}, {"c", 0}}),
       1});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  auto evaluation = engine.Evaluate(*cycle, nodes);
  ASSERT_EQ(evaluation[0].scores.size(), 1u);
  EXPECT_EQ(evaluation[0].scores[0].plugin, "scores");
  EXPECT_EQ(evaluation[0].combined, 80);
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{8, 4, 0}));
}

TEST_F(EngineFixture, first_unschedulable_verdict_is_kept_among_equals) {
  std::vector<WeightedPlugin> plugins;
  for (const char* name : {"one", "two"}) {
    plugins.push_back(
        {std::make_unique<FakePlugin>(
             name, std::map<std::string, Verdict>{{"a", Verdict::Unschedulable(name)}},
             std::map<std::string, double>{}),
         0});
  }
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  auto v = engine.Filter(*cycle, nodes);
  EXPECT_EQ(v[0].reason, "one");
  auto evaluation = engine.Evaluate(*cycle, nodes);
  EXPECT_EQ(evaluation[0].rejected_by, "one");
  EXPECT_TRUE(evaluation[1].verdict.passed());
}

// A plugin whose Prepare finds the pod's own settings malformed, as gpu-match does a bad
// gpusched.io/ annotation.
class RejectingPlugin : public Plugin, public PreparePlugin, public FilterPlugin {
 public:
  std::string_view name() const override { return "rejecting"; }
  void Prepare(Cycle& cycle) const override { cycle.Reject("bad pod setting"); }
  Verdict Filter(const Cycle&, const NodeState&) const override { return Verdict::Pass(); }
};

TEST_F(EngineFixture, a_rejected_cycle_rejects_every_node_as_unresolvable) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back({std::make_unique<RejectingPlugin>(), 0});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  std::vector<std::string_view> rejected_by;
  auto verdicts = engine.Filter(*cycle, nodes, &rejected_by);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    EXPECT_EQ(verdicts[i].code, VerdictCode::kUnresolvable);
    EXPECT_EQ(verdicts[i].reason, "bad pod setting");
    EXPECT_EQ(rejected_by[i], kPolicyRejection);
  }
  // A profile choice that failed rejects the pod before any plugin is prepared.
  Engine plain = Make({}, kGpuPodsOnly);
  auto unselected = plain.NewCycle(gpu_pod, snapshot, "unknown profile");
  EXPECT_EQ(plain.Filter(*unselected, nodes)[0].reason, "unknown profile");
  auto selected = plain.NewCycle(cpu_pod, snapshot, "unknown profile");
  EXPECT_TRUE(plain.Filter(*selected, nodes)[0].passed());  // no GPU demand: not our business
}

TEST_F(EngineFixture, minmax_mapping_spreads_candidates_over_zero_to_ten) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<FakePlugin>("x", std::map<std::string, Verdict>{},
                                    std::map<std::string, double>{{"a", 60}, {"b", 55}, {"c", 50}}),
       1});
  Engine engine(GpuResourceNames(), std::move(plugins), {.mapping = ScoreMapping::kMinMax});
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{10, 5, 0}));
}

TEST_F(EngineFixture, rank_mapping_gives_each_distinct_mean_its_own_step) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<FakePlugin>("x", std::map<std::string, Verdict>{},
                                    std::map<std::string, double>{{"a", 51}, {"b", 50}, {"c", 51}}),
       1});
  Engine engine(GpuResourceNames(), std::move(plugins), {.mapping = ScoreMapping::kRank});
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  // A one-point lead is a full rank step (two extender points); equal means share a step.
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{10, 8, 10}));
}

TEST(RankMapping, only_the_five_best_distinct_means_score) {
  std::vector<std::string> names;
  std::map<std::string, double> scores;
  std::vector<NodeState> states;
  for (int i = 0; i < 14; ++i) {
    names.push_back("n" + std::to_string(i));
    scores[names.back()] = i;  // n13 best
    states.push_back(ContentNode(names.back()));
  }
  std::vector<const NodeState*> nodes;
  for (const auto& s : states) nodes.push_back(&s);
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<FakePlugin>("x", std::map<std::string, Verdict>{}, scores), 1});
  Engine engine(GpuResourceNames(), std::move(plugins), {.mapping = ScoreMapping::kRank});
  auto snapshot = testing::SnapshotOf({});
  PodInfo pod = testing::MakePod("p", ResourceList{{"nvidia.com/gpu", 1000}});
  auto cycle = engine.NewCycle(pod, *snapshot);
  EXPECT_EQ(engine.Prioritize(*cycle, nodes),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 4, 6, 8, 10}));
}

TEST_F(EngineFixture, weighted_mean_maps_to_zero_to_ten) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back(
      {std::make_unique<FakePlugin>("x", std::map<std::string, Verdict>{},
                                    std::map<std::string, double>{{"a", 100}, {"b", 50}, {"c", 0}}),
       3});
  plugins.push_back(
      {std::make_unique<FakePlugin>("y", std::map<std::string, Verdict>{},
                                    std::map<std::string, double>{{"a", 0}, {"b", 50}, {"c", 100}}),
       1});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  // a: (300+0)/4 = 75 -> 7.5 -> 8; b: 50 -> 5; c: 100/4 = 25 -> 2.5 -> 3
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{8, 5, 3}));
}

TEST_F(EngineFixture, normalize_runs_before_weighting_and_zero_weight_plugins_do_not_score) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back({std::make_unique<FakePlugin>(
                         "inverted", std::map<std::string, Verdict>{},
                         std::map<std::string, double>{{"a", 100}, {"b", 40}, {"c", 0}}, true),
                     1});
  plugins.push_back({std::make_unique<FakePlugin>(
                         "ignored", std::map<std::string, Verdict>{},
                         std::map<std::string, double>{{"a", 100}, {"b", 100}, {"c", 100}}),
                     0});
  Engine engine = Make(std::move(plugins));
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{0, 6, 10}));
}

TEST_F(EngineFixture, best_only_keeps_the_tied_best_of_the_passing_nodes_and_names_its_step) {
  // d ties with b at the top among the passing nodes; a scores higher but is rejected.
  NodeState d = ContentNode("d");
  std::vector<const NodeState*> four{&a, &b, &c, &d};
  std::vector<WeightedPlugin> plugins;
  plugins.push_back({std::make_unique<FakePlugin>(
                         "x", std::map<std::string, Verdict>{{"a", Verdict::Unschedulable("full")}},
                         std::map<std::string, double>{{"a", 90}, {"b", 60}, {"c", 20}, {"d", 60}}),
                     1});
  Engine engine(GpuResourceNames(), std::move(plugins), {.best_only = true});
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  std::vector<std::string_view> rejected_by;
  std::vector<Verdict> verdicts = engine.Filter(*cycle, four, &rejected_by);
  EXPECT_EQ(verdicts[0].reason, "full");
  EXPECT_TRUE(verdicts[1].passed());
  EXPECT_EQ(verdicts[2].code, VerdictCode::kUnschedulable);
  EXPECT_EQ(verdicts[2].reason, kNotBestReason);
  EXPECT_TRUE(verdicts[3].passed());
  EXPECT_EQ(rejected_by, (std::vector<std::string_view>{"x", "", kNotBestRejection, ""}));
  // Explain's evaluation shows every passing node's score, best-only or not.
  EXPECT_TRUE(engine.Evaluate(*cycle, four)[2].verdict.passed());
  // A pod the engine ignores is not ranked.
  Engine ignoring(GpuResourceNames(), {}, {.best_only = true});
  auto cpu_cycle = ignoring.NewCycle(cpu_pod, snapshot);
  for (const auto& v : ignoring.Filter(*cpu_cycle, four)) EXPECT_TRUE(v.passed());
}

TEST_F(EngineFixture, gpu_pods_only_passes_a_pod_without_gpu_demand_and_scores_it_zero) {
  std::vector<WeightedPlugin> plugins;
  plugins.push_back({std::make_unique<FakePlugin>(
                         "x", std::map<std::string, Verdict>{{"a", Verdict::Unresolvable("no")}},
                         std::map<std::string, double>{{"a", 100}}),
                     1});
  Engine engine = Make(std::move(plugins), kGpuPodsOnly);
  auto cycle = engine.NewCycle(cpu_pod, snapshot);
  for (const auto& v : engine.Filter(*cycle, nodes)) EXPECT_TRUE(v.passed());
  EXPECT_EQ(engine.Prioritize(*cycle, nodes), (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(EngineFixture, cycle_stores_each_reason_once) {
  Engine engine = Make({});
  auto cycle = engine.NewCycle(gpu_pod, snapshot);
  static constexpr std::string_view kPrefix = "Insufficient ";
  std::string_view r1 = cycle->Reason(kPrefix, "nvidia.com/gpu");
  std::string_view r2 = cycle->Reason(kPrefix, "nvidia.com/gpu");
  EXPECT_EQ(r1, "Insufficient nvidia.com/gpu");
  EXPECT_EQ(r1.data(), r2.data());
}

TEST(Registry, builds_default_engine_and_rejects_unknown_plugins) {
  PolicySpec policy = DefaultPolicySpec();
  EXPECT_NE(BuildEngine(policy, policy.profiles[0]), nullptr);
  ProfileSpec bad = policy.profiles[0];
  bad.plugins["no-such-plugin"].enabled = true;
  bad.plugins["no-such-plugin"].weight = 1;
  EXPECT_THROW(BuildEngine(policy, bad), InputError);
  ProfileSpec heavy = policy.profiles[0];
  heavy.plugins["gpu-binpack"].weight = 101;
  EXPECT_THROW(BuildEngine(policy, heavy), InputError);
  ProfileSpec weighted_filter = policy.profiles[0];  // gpu-fit only filters
  weighted_filter.plugins["gpu-fit"].weight = 1;
  EXPECT_THROW(BuildEngine(policy, weighted_filter), InputError);
  ProfileSpec disabled = policy.profiles[0];
  disabled.plugins["gpu-fit"].enabled = false;
  auto engine = BuildEngine(policy, disabled);
  for (const auto& p : engine->plugins()) EXPECT_NE(p.plugin->name(), "gpu-fit");
}

}  // namespace
}  // namespace gpusched::engine_test
