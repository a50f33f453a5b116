#include "gpusched/plugins/product_reserve.h"

#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/policy/engine_builder.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::product_reserve_test {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Units;

TaskShape Gpus(int32_t n, std::vector<std::string> models = {}, int64_t milli = kMilliPerGpu) {
  return TaskShape{0, milli, n, std::move(models)};
}

// The observed side alone (no prior: priorPods 0), over `free` milli-GPUs per product whose
// GPUs are as many as those free.
std::map<std::string, double, std::less<>> Observed(std::span<const WeightedShape> workload,
                                                    const GpuMilliByProduct& free) {
  GpusByProduct gpus;
  for (const auto& [product, milli] : free) gpus[product] = milli / kMilliPerGpu;
  return ProductReserveScores({workload, 100, gpus, free, /*prior_pods=*/0});
}

// 100 x (1 - (the highest slack - slack) / the product's free GPUs): the score the header states.
double SlackScore(double slack, double highest, double free) {
  return 100 * (1 - (highest - slack) / free);
}

TEST(ProductReserve, slack_is_free_gpus_less_the_pinned_share_of_what_is_left_to_fill) {
  GpuMilliByProduct gpus = {{"T4", 8000}, {"L4", 16000}, {"A100", 16000}};
  // Per task: 0.25 x 1 GPU pinned to T4, 0.25 x 4 GPUs pinned to A100 or L4 (half on each),
  // 0.5 unpinned: 1.75 GPUs, of which T4 alone takes 1/7 and A100 and L4 2/7 each. Of the 40
  // free GPUs, pins would take 40/7 of the T4's 8, 80/7 of the A100's and the L4's 16.
  std::vector<WeightedShape> workload = {
      {Gpus(1, {"T4"}), 0.25}, {Gpus(4, {"A100", "L4"}), 0.25}, {Gpus(1), 0.5}};
  auto scores = Observed(workload, gpus);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_DOUBLE_EQ(scores["A100"], 100);
  EXPECT_DOUBLE_EQ(scores["L4"], 100);
  EXPECT_NEAR(scores["T4"], SlackScore(8 - 40.0 / 7, 16 - 80.0 / 7, 8), 1e-9);
  // Half-GPU shares count as half a GPU: the T4 pods now ask 1/13 of 1.625 GPUs per task, and the
  // T4 keeps the most room.
  workload[0].shape = Gpus(1, {"T4"}, 500);
  scores = Observed(workload, gpus);
  EXPECT_DOUBLE_EQ(scores["T4"], 100);
  EXPECT_NEAR(scores["A100"], SlackScore(16 - 160.0 / 13, 8 - 40.0 / 13, 16), 1e-9);
  // A product no pinned shape asks for keeps all its free GPUs; nothing pinned, nothing to say.
  gpus["H100"] = 24000;
  EXPECT_DOUBLE_EQ(Observed(workload, gpus)["H100"], 100);
  EXPECT_TRUE(Observed(std::vector<WeightedShape>{{Gpus(2), 1}}, gpus).empty());
  // A shape pinned to a product the cluster does not have asks nothing of the others.
  EXPECT_TRUE(Observed(std::vector<WeightedShape>{{Gpus(2, {"V100"}), 1}}, gpus).empty());
  // Shapes that all weigh nothing say nothing (no division by zero).
  EXPECT_TRUE(Observed(std::vector<WeightedShape>{{Gpus(2, {"T4"}), 0}}, gpus).empty());
  // A product with no GPU free takes no share of a shape that accepts it, and is not scored.
  gpus["A100"] = 0;
  scores = Observed(workload, gpus);
  EXPECT_FALSE(scores.contains("A100"));
  EXPECT_EQ(scores.size(), 3u);
}

// Issue #36, a draw of the issue's own sampling: after 20 pods on 6 A100 x8 and 8 L4 x4, the pins
// seen asked 10 of 27 GPUs of the A100s and 2 of the L4s, and free pods had filled the L4s to 16
// free GPUs. Per free GPU the A100s looked the more needed (10/37 against 2/16), so free pods
// kept filling the L4s until four L4 pins at the end found no room (62 of 72 GPUs placed). In
// room left, the L4s keep 12 GPUs for free pods and the A100s 17: free pods turn to the A100s.
TEST(ProductReserve, a_product_with_little_room_left_loses_free_pods_though_few_pins_ask_for_it) {
  std::vector<WeightedShape> workload = {
      {Gpus(1, {"L4"}), 2.0 / 27}, {Gpus(1, {"A100"}), 10.0 / 27}, {Gpus(1), 15.0 / 27}};
  auto l4_filling = Observed(workload, {{"A100", 37000}, {"L4", 16000}});
  EXPECT_DOUBLE_EQ(l4_filling["A100"], 100);
  EXPECT_NEAR(l4_filling["L4"], SlackScore(16 - 53 * 2.0 / 27, 37 - 53 * 10.0 / 27, 16), 1e-9);
  EXPECT_LT(l4_filling["L4"], 70);
  // While the L4s are empty they have the room, and free pods go there.
  auto empty = Observed(workload, {{"A100", 48000}, {"L4", 32000}});
  EXPECT_GT(empty["L4"], empty["A100"]);
}

// Before pins are seen, the prior keeps the products filling in step: a product whose share of
// free GPUs fell below its share of all GPUs scores lower. With no pod seen it decides alone; as
// pods are seen it weighs like priorPods of them, so what the pins say takes over.
TEST(ProductReserve, a_prior_keeps_products_filling_in_step_until_pins_are_seen) {
  const GpusByProduct gpus = {{"A100", 48}, {"L4", 32}};
  const GpuMilliByProduct empty = {{"A100", 48000}, {"L4", 32000}};
  const GpuMilliByProduct l4_quarter = {{"A100", 48000}, {"L4", 24000}};
  // An empty cluster: every product alike.
  auto alike = ProductReserveScores({{}, 0, gpus, empty});
  EXPECT_DOUBLE_EQ(alike["A100"], 100);
  EXPECT_DOUBLE_EQ(alike["L4"], 100);
  // A quarter of the L4s taken, no pod seen: in step, the L4s would keep 24 - 0.4 x 72 free GPUs,
  // the A100s 48 - 0.6 x 72.
  auto in_step = ProductReserveScores({{}, 0, gpus, l4_quarter});
  EXPECT_DOUBLE_EQ(in_step["A100"], 100);
  EXPECT_NEAR(in_step["L4"], SlackScore(-4.8, 4.8, 24), 1e-9);
  // Half the L4s taken: the L4s lack more than their free GPUs against the A100s.
  EXPECT_DOUBLE_EQ(ProductReserveScores({{}, 0, gpus, {{"A100", 48000}, {"L4", 16000}}})["L4"], 0);
  // Pods seen but no pin: the prior speaks for its part only, the rest has no preference.
  auto unpinned = ProductReserveScores(
      {std::vector<WeightedShape>{{Gpus(1), 1}}, 12, gpus, l4_quarter, /*prior_pods=*/4});
  EXPECT_NEAR(unpinned["L4"], 75 + 0.25 * SlackScore(-4.8, 4.8, 24), 1e-9);
  // One A100 pin seen in 4 pods, a prior of 4: a quarter of the workload is pinned, and the
  // shares are half the pins' (A100 0.25, L4 0), half that quarter spread as the GPUs are (0.6,
  // 0.4). The A100s still keep the more room.
  std::vector<WeightedShape> a100_pinned = {{Gpus(1, {"A100"}), 1.0 / 4}, {Gpus(1), 3.0 / 4}};
  auto half = ProductReserveScores({a100_pinned, 4, gpus, l4_quarter, 4});
  EXPECT_DOUBLE_EQ(half["A100"], 100);
  EXPECT_NEAR(half["L4"], SlackScore(24 - 0.05 * 72, 48 - 0.2 * 72, 24), 1e-9);
  // Many pods seen: the pins decide. On an empty fleet the L4s, which no pin needs, keep the
  // most room.
  auto seen = ProductReserveScores({a100_pinned, 4000, gpus, empty, 4});
  EXPECT_DOUBLE_EQ(seen["L4"], 100);
  EXPECT_NEAR(seen["A100"], SlackScore(48 - 0.25 * 80, 32, 48), 0.1);
  // One product: nothing to choose between.
  EXPECT_TRUE(ProductReserveScores({{}, 0, {{"L4", 32}}, {{"L4", 16000}}}).empty());
}

NodeState ProductNode(const std::string& name, const std::string& product, int64_t gpus) {
  NodeState n = MakeNode(name, ResourceList{{std::string(kGpuResource), Units(gpus)}});
  n.info.gpu.product = product;
  return n;
}

// The live snapshot counts each product's free GPUs off its nodes' usage; the simulator's follows
// the table its run keeps current.
TEST(ProductReserve, snapshot_counts_free_gpus_or_follows_a_tracked_table) {
  NodeState busy = ProductNode("t4-1", "Tesla-T4", 4);
  busy.used = ResourceList{{std::string(kGpuResource), Units(3)}};
  NodeState over = ProductNode("t4-2", "Tesla-T4", 2);
  over.used = ResourceList{{std::string(kGpuResource), Units(5)}};  // counts as none free
  std::vector<ClusterSnapshot::NodePtr> nodes = {
      std::make_shared<const NodeState>(busy), std::make_shared<const NodeState>(over),
      std::make_shared<const NodeState>(MakeNode("cpu-1", ResourceList{{"cpu", 4000}}))};
  ClusterSnapshot live(nodes, 1);
  EXPECT_EQ(live.free_gpu_milli_by_product(), (GpuMilliByProduct{{"Tesla-T4", 1000}}));
  auto tally = testing::TallyOf(DeviceModel::WholeDevices(), {{"Tesla-T4", 2500}});
  ClusterSnapshot simulated({.nodes = nodes, .generation = 1, .running = tally});
  tally->free["Tesla-T4"] = 500;
  EXPECT_EQ(simulated.free_gpu_milli_by_product().at("Tesla-T4"), 500);
}

// Through the engine, as the server and the simulator run it: NewCycle prepares the plugin, and
// a pod free to choose ranks the product that pinned pods need below the one they do not.
TEST(ProductReserve, free_pods_keep_off_the_product_pinned_pods_need) {
  std::vector<ClusterSnapshot::NodePtr> nodes = {
      std::make_shared<const NodeState>(ProductNode("t4-1", "Tesla-T4", 4)),
      std::make_shared<const NodeState>(ProductNode("l4-1", "NVIDIA-L4", 8))};
  ObservedWorkload seen{{{Gpus(1, {"Tesla-T4"}), 0.5}, {Gpus(1), 0.5}}, 10};
  ClusterSnapshot snapshot({.nodes = nodes, .generation = 1, .observed_workload = seen});
  EXPECT_EQ(snapshot.gpus_by_product().at("Tesla-T4"), 4);
  EXPECT_EQ(snapshot.free_gpu_milli_by_product().at("Tesla-T4"), 4000);

  PolicySpec policy = DefaultPolicySpec();
  ProfileSpec profile;
  profile.plugins = {{"gpu-fit", {true, 0, nullptr}},
                     {std::string(ProductReservePlugin::kName), {true, 1, nullptr}}};
  std::unique_ptr<Engine> engine = BuildEngine(policy, profile);
  std::vector<const NodeState*> candidates = {nodes[0].get(), nodes[1].get()};

  PodInfo free_pod = MakePod("free", {{std::string(kGpuResource), Units(1)}});
  auto cycle = engine->NewCycle(free_pod, snapshot);
  auto eval = engine->Evaluate(*cycle, candidates);
  // Both products empty, 10 pods seen against the prior's 16, half the workload pinned to the T4:
  // the T4 is asked for by 10/26 x 0.5 (pins) + 16/26 x 0.5 x 1/3 (prior) = 23/78 of what
  // arrives, the L4 by 16/26 x 0.5 x 2/3 = 16/78; of the 12 free GPUs the L4 keeps
  // 8 - 12 x 16/78, the T4 4 - 12 x 23/78, more than its 4 GPUs less: 0.
  EXPECT_DOUBLE_EQ(eval[0].combined, 0);    // T4: the pinned pods' product
  EXPECT_DOUBLE_EQ(eval[1].combined, 100);  // L4
  EXPECT_GT(eval[1].score, eval[0].score);

  // A pod that asks for no GPU is not prepared for, and the plugin does not score it.
  PodInfo cpu_pod = MakePod("cpu", {{"cpu", 1000}});
  auto cpu_cycle = engine->NewCycle(cpu_pod, snapshot);
  const ProductReservePlugin plugin;
  EXPECT_FALSE(plugin.ScoresPod(*cpu_cycle));
  EXPECT_TRUE(plugin.ScoresPod(*cycle));
}

// The issue's field case (#29): pods pinned to the L4 with required node affinity, as operators
// write them, keep free pods off the L4 just as a nodeSelector pin does.
TEST(ProductReserve, pods_pinned_by_required_node_affinity_reserve_their_product) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(
      testing::LabeledNode("a100", 8, {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}).info);
  ledger.UpsertNode(testing::LabeledNode("l4", 4, {{"nvidia.com/gpu.product", "NVIDIA-L4"}}).info);
  ledger.UpsertPod(testing::PodFromJson(R"({"metadata":{"name":"pinned","uid":"u1"},"spec":{
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
        "nodeSelectorTerms":[{"matchExpressions":[
          {"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]}]}]}}},
      "containers":[{"resources":{"limits":{"nvidia.com/gpu":4}}}]}})"));
  auto snapshot = ledger.BuildSnapshot();

  PolicySpec policy = DefaultPolicySpec();
  ProfileSpec profile;
  profile.plugins = {{"gpu-fit", {true, 0, nullptr}},
                     {std::string(ProductReservePlugin::kName), {true, 1, nullptr}}};
  std::unique_ptr<Engine> engine = BuildEngine(policy, profile);
  std::vector<const NodeState*> candidates = {snapshot->Find("a100"), snapshot->Find("l4")};
  PodInfo free_pod = MakePod("free", {{std::string(kGpuResource), Units(1)}});
  auto cycle = engine->NewCycle(free_pod, *snapshot);
  auto eval = engine->Evaluate(*cycle, candidates);
  EXPECT_DOUBLE_EQ(eval[0].combined, 100);  // A100: no pinned pod needs it
  // L4: the pinned pods' product, by the one pod seen against the prior's 16: it is asked for by
  // 1/17 x 1 + 16/17 x 1/3 = 19/51 of what arrives, the A100 by 16/17 x 2/3 = 32/51.
  EXPECT_NEAR(eval[1].combined, SlackScore(4 - 12 * 19.0 / 51, 8 - 12 * 32.0 / 51, 4), 1e-9);
}

TEST(CycleState, put_replaces_and_get_checks_the_type) {
  struct Number : CycleData {
    explicit Number(int v) : value(v) {}
    int value;
  };
  struct Other : CycleData {};
  ClusterSnapshot snapshot({}, 1);
  PodInfo pod = MakePod("p", {});
  Cycle cycle(pod, {}, snapshot);
  EXPECT_EQ(cycle.Get<Number>("a"), nullptr);
  cycle.Put("a", std::make_unique<Number>(1));
  cycle.Put("b", std::make_unique<Other>());
  cycle.Put("a", std::make_unique<Number>(2));
  ASSERT_NE(cycle.Get<Number>("a"), nullptr);
  EXPECT_EQ(cycle.Get<Number>("a")->value, 2);
  EXPECT_EQ(cycle.Get<Number>("b"), nullptr);  // there, but not a Number
  EXPECT_NE(cycle.Get<Other>("b"), nullptr);
}

}  // namespace
}  // namespace gpusched::product_reserve_test
