#include "gpusched/plugins/product_reserve.h"

#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/policy/policy_spec.h"
#include "gpusched/policy/engine_builder.h"
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

TEST(ProductReserve, pressure_is_pinned_gpus_asked_per_free_gpu_of_the_product) {
  GpuMilliByProduct gpus = {{"T4", 8000}, {"L4", 16000}, {"A100", 16000}};
  // Per task: 0.25 x 1 GPU pinned to T4, 0.25 x 4 GPUs pinned to A100 or L4 (half on each),
  // 0.5 unpinned. Pressure: T4 0.25 / 8, A100 and L4 0.5 / 16 each: T4 and A100 equal.
  std::vector<WeightedShape> workload = {
      {Gpus(1, {"T4"}), 0.25}, {Gpus(4, {"A100", "L4"}), 0.25}, {Gpus(1), 0.5}};
  auto scores = Observed(workload, gpus);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_DOUBLE_EQ(scores["T4"], 0);
  EXPECT_DOUBLE_EQ(scores["A100"], 0);
  EXPECT_DOUBLE_EQ(scores["L4"], 0);
  // Half-GPU shares count as half a GPU: the T4 pods now ask half as much.
  workload[0].shape = Gpus(1, {"T4"}, 500);
  scores = Observed(workload, gpus);
  EXPECT_DOUBLE_EQ(scores["T4"], 50);
  EXPECT_DOUBLE_EQ(scores["A100"], 0);
  // A product no pinned shape asks for scores 100; nothing pinned, nothing to say.
  gpus["H100"] = 8000;
  EXPECT_DOUBLE_EQ(Observed(workload, gpus)["H100"], 100);
  EXPECT_TRUE(Observed(std::vector<WeightedShape>{{Gpus(2), 1}}, gpus).empty());
  // A shape pinned to a product the cluster does not have asks nothing of the others.
  EXPECT_TRUE(Observed(std::vector<WeightedShape>{{Gpus(2, {"V100"}), 1}}, gpus).empty());
  // A product with no GPU free takes no share of a shape that accepts it, and is not scored.
  gpus["A100"] = 0;
  scores = Observed(workload, gpus);
  EXPECT_FALSE(scores.contains("A100"));
  EXPECT_DOUBLE_EQ(scores["L4"], 0);  // the A100-or-L4 shape now asks 1 GPU per task of the L4
}

// Issue #36's affinity-sampled seed 1: 6 A100 x8 and 8 L4 x4, pinned pods asking 24 of the
// A100s and 10 of the L4s. Over all GPUs the A100s look the more needed (24/48 against 10/32),
// so free pods went to the L4s until two L4-pinned pods found no room. Over free GPUs, once the
// L4s are two-thirds full they are the more needed, and free pods turn to the A100s.
TEST(ProductReserve, free_pods_turn_away_from_a_product_as_it_fills) {
  std::vector<WeightedShape> workload = {
      {Gpus(1, {"L4"}), 10.0 / 72}, {Gpus(1, {"A100"}), 24.0 / 72}, {Gpus(1), 38.0 / 72}};
  auto empty = Observed(workload, {{"A100", 48000}, {"L4", 32000}});
  EXPECT_GT(empty["L4"], empty["A100"]);
  auto l4_filling = Observed(workload, {{"A100", 40000}, {"L4", 12000}});
  EXPECT_GT(l4_filling["A100"], l4_filling["L4"]);
  EXPECT_DOUBLE_EQ(l4_filling["L4"], 0);
}

// Before pins are seen, the prior keeps the products filling in step: a product whose share of
// free GPUs fell below its share of all GPUs scores lower. With no pod seen it decides alone; as
// pods are seen it weighs like priorPods of them, so what the pins say takes over.
TEST(ProductReserve, a_prior_keeps_products_filling_in_step_until_pins_are_seen) {
  const GpusByProduct gpus = {{"A100", 48}, {"L4", 32}};
  const GpuMilliByProduct empty = {{"A100", 48000}, {"L4", 32000}};
  const GpuMilliByProduct l4_half = {{"A100", 48000}, {"L4", 16000}};
  // An empty cluster: every product alike.
  auto alike = ProductReserveScores({{}, 0, gpus, empty});
  EXPECT_DOUBLE_EQ(alike["A100"], alike["L4"]);
  // Half the L4s taken, no pod seen: the A100s score 100, the L4s half of it.
  auto in_step = ProductReserveScores({{}, 0, gpus, l4_half});
  EXPECT_DOUBLE_EQ(in_step["A100"], 100);
  EXPECT_DOUBLE_EQ(in_step["L4"], 50);
  // One A100 pin seen in 4 pods: the blend is half prior (A100 100, L4 50), half pins (A100 0,
  // L4 100).
  std::vector<WeightedShape> a100_pinned = {{Gpus(1, {"A100"}), 1.0 / 4}, {Gpus(1), 3.0 / 4}};
  auto half = ProductReserveScores({a100_pinned, 4, gpus, l4_half});
  EXPECT_DOUBLE_EQ(half["A100"], 50);
  EXPECT_DOUBLE_EQ(half["L4"], 75);
  // Many pods seen: the pins decide.
  auto seen = ProductReserveScores({a100_pinned, 400, gpus, l4_half});
  EXPECT_GT(seen["L4"], 95);
  EXPECT_LT(seen["A100"], 5);
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
  GpuMilliByProduct tracked = {{"Tesla-T4", 2500}};
  ClusterSnapshot simulated(nodes, 1, {}, {}, {}, {}, DeviceModel::WholeDevices(), &tracked);
  tracked["Tesla-T4"] = 500;
  EXPECT_EQ(simulated.free_gpu_milli_by_product().at("Tesla-T4"), 500);
}

// Through the engine, as the server and the simulator run it: NewCycle prepares the plugin, and
// a pod free to choose ranks the product that pinned pods need below the one they do not.
TEST(ProductReserve, free_pods_keep_off_the_product_pinned_pods_need) {
  std::vector<ClusterSnapshot::NodePtr> nodes = {
      std::make_shared<const NodeState>(ProductNode("t4-1", "Tesla-T4", 4)),
      std::make_shared<const NodeState>(ProductNode("l4-1", "NVIDIA-L4", 8))};
  ObservedWorkload seen{{{Gpus(1, {"Tesla-T4"}), 0.5}, {Gpus(1), 0.5}}, 10};
  ClusterSnapshot snapshot(nodes, 1, seen);
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
  // Both products empty: the prior (10 pods seen against its 4) has no preference, the pins put
  // the T4 at 0 and the L4 at 100.
  EXPECT_DOUBLE_EQ(eval[0].combined, 100 * 4.0 / 14);  // T4: the pinned pods' product
  EXPECT_DOUBLE_EQ(eval[1].combined, 100);              // L4
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
  // L4: the pinned pods' product, by the one pod seen against the prior's 4
  EXPECT_DOUBLE_EQ(eval[1].combined, 100 * 4.0 / 5);
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
