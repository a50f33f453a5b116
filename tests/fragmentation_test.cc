// The FGD fragmentation measure on hand-made nodes and workloads, and its live-cluster form.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpusched/cluster/cluster_fragmentation.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/packing/fragmentation.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/packing/target_workload.h"
#include "testing/test_support.h"

namespace gpusched::fragmentation_test {
namespace {

TaskShape Shape(int64_t cpu, int32_t gpus, int64_t milli, std::vector<std::string> models = {}) {
  TaskShape s;
  s.cpu_milli = cpu;
  s.gpu_milli = milli;
  s.num_gpu = gpus;
  s.gpu_models = std::move(models);
  return s;
}

TEST(Fragmentation, a_fitting_shape_counts_only_gpus_with_less_free_than_its_share) {
  std::vector<int64_t> free = {1000, 300, 600, 0};  // idle 1900
  NodeIdle node{.cpu_milli = 8000, .gpu_free_milli = free, .model = "T4"};
  // A 500-milli sharing task fits (1000 or 600); the 300 free on GPU 2 is fragment.
  EXPECT_TRUE(ShapeFits(node, Shape(1000, 1, 500)));
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 1, 500)), 300);
  // A whole-GPU task fits on GPU 1 only: 300 + 600 are fragment.
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 1, 1000)), 900);
  // Two whole GPUs do not fit: all idle GPU is fragment.
  EXPECT_FALSE(ShapeFits(node, Shape(1000, 2, 1000)));
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 2, 1000)), 1900);
  // Too little CPU, a CPU-only task, or a model the node lacks: all idle GPU.
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(9000, 1, 100)), 1900);
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 0, 0)), 1900);
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 1, 100, {"V100M16", "V100M32"})), 1900);
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 1, 100, {"P100", "T4"})), 0);
}

TaskShape Slices(const std::string& profile, int32_t count) {
  TaskShape s;
  s.mig_profile = profile;
  s.mig_count = count;
  return s;
}

TEST(Fragmentation, mig_slices_serve_only_tasks_of_their_profile) {
  std::vector<int64_t> free = {1000, 0};
  // Three free 1g slices (1/7 GPU each) and one 3g slice (3/7): 428 milli each way.
  std::vector<IdleSlices> mig = {{"1g.10gb", 3, 1}, {"3g.40gb", 1, 3}};
  NodeIdle node{.cpu_milli = 8000, .gpu_free_milli = free, .model = "A100", .mig_free = mig};
  EXPECT_EQ(IdleMilli(node), 1000 + 428 + 428);
  // A 1g task fits and uses only its slices: the 3g slice is fragment. Devices are judged by
  // device tasks, not by MIG ones.
  EXPECT_TRUE(ShapeFits(node, Slices("1g.10gb", 1)));
  EXPECT_EQ(ShapeFragmentMilli(node, Slices("1g.10gb", 1)), 428);
  // Four 1g slices, or a profile the node does not offer, do not fit: every free slice.
  EXPECT_FALSE(ShapeFits(node, Slices("1g.10gb", 4)));
  EXPECT_EQ(ShapeFragmentMilli(node, Slices("1g.10gb", 4)), 856);
  EXPECT_FALSE(ShapeFits(node, Slices("2g.20gb", 1)));
  EXPECT_EQ(ShapeFragmentMilli(node, Slices("2g.20gb", 1)), 856);
  // Too little CPU for a MIG task: every free slice.
  TaskShape hungry = Slices("3g.40gb", 1);
  hungry.cpu_milli = 9000;
  EXPECT_EQ(ShapeFragmentMilli(node, hungry), 856);
  // A whole-GPU task fits on the free GPU: no device fragment; slices are not its kind.
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 1, 1000)), 0);
  EXPECT_EQ(ShapeFragmentMilli(node, Shape(1000, 2, 1000)), 1000);

  // Each kind's weights sum to 1, as in a live target workload: half the MIG weight on 1g (428),
  // half on 2g (856); all the device weight on 2 GPUs (1000).
  std::vector<WeightedShape> mixed = {
      {Slices("1g.10gb", 1), 0.5}, {Slices("2g.20gb", 1), 0.5}, {Shape(1000, 2, 1000), 1.0}};
  EXPECT_DOUBLE_EQ(NodeFragmentMilli(node, mixed), 1000 + (428 + 856) / 2.0);
}

TEST(Fragmentation, without_cpu_a_placement_changes_only_its_own_kind) {
  // Weights that do not sum to 1 within a kind are reweighted; ones that do keep every bit.
  std::vector<WeightedShape> loose = {
      {Slices("1g.10gb", 1), 0.2}, {Shape(0, 1, 1000), 0.3}, {Shape(0, 4, 1000), 0.2}};
  auto reweighted = ShapesOfKind(loose, /*mig=*/false);
  ASSERT_EQ(reweighted.size(), 2u);
  EXPECT_DOUBLE_EQ(reweighted[0].weight, 0.6);
  EXPECT_DOUBLE_EQ(reweighted[1].weight, 0.4);
  EXPECT_EQ(ShapesOfKind(loose, /*mig=*/true)[0].weight, 1.0);

  // A live target workload: each kind's weights sum to 1.
  std::vector<WeightedShape> mixed = {{Slices("1g.10gb", 1), 0.4},
                                      {Slices("3g.40gb", 1), 0.6},
                                      {Shape(0, 1, 1000), 0.7},
                                      {Shape(0, 4, 1000), 0.3}};
  auto devices = ShapesOfKind(mixed, /*mig=*/false);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].weight, 0.7);
  auto slices = ShapesOfKind(mixed, /*mig=*/true);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[1].shape, Slices("3g.40gb", 1));

  // A node with CPU unbounded (the live inventory): the score under the pod's kind alone is the
  // score under the whole workload, for a GPU pod and for a MIG pod.
  std::vector<int64_t> free = {1000, 1000, 1000, 0};
  std::vector<IdleSlices> mig = {{"1g.10gb", 2, 1}, {"3g.40gb", 1, 3}};
  NodeIdle node{.cpu_milli = std::numeric_limits<int64_t>::max(),
                .gpu_free_milli = free,
                .model = "A100",
                .mig_free = mig};
  EXPECT_EQ(FgdScore(node, Shape(0, 1, 1000), mixed).score,
            FgdScore(node, Shape(0, 1, 1000), devices).score);
  EXPECT_NE(FgdScore(node, Shape(0, 1, 1000), devices).score, 50);  // it does see the 4-GPU hole
  EXPECT_EQ(FgdScore(node, Slices("3g.40gb", 1), mixed).score,
            FgdScore(node, Slices("3g.40gb", 1), slices).score);
}

TEST(Fragmentation, idle_slices_and_mig_shapes_come_from_resources) {
  NodeState node =
      testing::MakeNode("mig",
                        ResourceList{{"nvidia.com/mig-1g.10gb", testing::Units(7)},
                                     {"nvidia.com/mig-3g.40gb", testing::Units(2)},
                                     {"nvidia.com/mig-2g.20gb.shared", testing::Units(4)}},
                        ResourceList{{"nvidia.com/mig-1g.10gb", testing::Units(2)}});
  IdleBuffers buffers;
  NodeIdle idle = IdleOf(node, DeviceModel::WholeDevices(), buffers);
  ASSERT_EQ(idle.mig_free.size(), 2u);  // time-sliced replicas are not slices
  EXPECT_EQ(idle.mig_free[0].profile, "1g.10gb");
  EXPECT_EQ(idle.mig_free[0].count, 5);
  EXPECT_EQ(idle.mig_free[0].compute_slices, 1);
  EXPECT_EQ(idle.mig_free[1].profile, "3g.40gb");
  EXPECT_EQ(idle.mig_free[1].count, 2);
  EXPECT_EQ(IdleMilli(idle), 5000 / 7 + 6000 / 7);

  TaskShape shape = ShapeOf(
      testing::MakePod("p", {{"cpu", 2000}, {"nvidia.com/mig-3g.40gb", testing::Units(2)}}));
  EXPECT_EQ(shape.mig_profile, "3g.40gb");
  EXPECT_EQ(shape.mig_count, 2);
  EXPECT_FALSE(shape.wants_gpu());
  EXPECT_TRUE(shape.wants_mig());
  EXPECT_FALSE(
      ShapeOf(testing::MakePod("s", {{"nvidia.com/mig-1g.10gb.shared", testing::Units(1)}}))
          .wants_mig());

  // fgd takes the slices from the node: one 3g task on a node whose target is 1g tasks removes
  // from the measure the 3g slice it took (857 - 428 milli of fragment).
  std::vector<WeightedShape> ones = {{Slices("1g.10gb", 1), 1.0}};
  TaskShape one_3g = Slices("3g.40gb", 1);
  EXPECT_EQ(FgdScore(idle, one_3g, ones).score,
            static_cast<int64_t>(100.0 / (1.0 + std::exp(-0.429))));
}

TEST(Fragmentation, node_fragment_is_the_frequency_weighted_sum) {
  std::vector<int64_t> free = {1000, 300};
  NodeIdle node{.cpu_milli = 8000, .gpu_free_milli = free, .model = "G2"};
  std::vector<WeightedShape> workload = {{Shape(1000, 1, 500), 0.5},    // fragment 300
                                         {Shape(1000, 2, 1000), 0.25},  // 1300
                                         {Shape(1000, 0, 0), 0.25}};    // 1300
  EXPECT_DOUBLE_EQ(NodeFragmentMilli(node, workload), 0.5 * 300 + 0.25 * 1300 + 0.25 * 1300);
}

TEST(Fragmentation, target_workload_keeps_the_most_frequent_shapes_up_to_the_coverage) {
  std::vector<TaskShape> tasks;
  for (int i = 0; i < 60; ++i) tasks.push_back(Shape(1000, 1, 1000));
  for (int i = 0; i < 30; ++i) tasks.push_back(Shape(2000, 1, 500));
  for (int i = 0; i < 6; ++i) tasks.push_back(Shape(4000, 0, 0));
  for (int i = 0; i < 4; ++i) tasks.push_back(Shape(8000, 8, 1000));
  // 60 + 30 + 6 = 96 >= 95: the rarest shape is left out and weights are renormalized over 96.
  auto w = TargetWorkload(tasks, 0.95);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].shape, Shape(1000, 1, 1000));
  EXPECT_DOUBLE_EQ(w[0].weight, 60.0 / 96);
  EXPECT_EQ(w[1].shape, Shape(2000, 1, 500));
  EXPECT_DOUBLE_EQ(w[2].weight, 6.0 / 96);
  EXPECT_EQ(TargetWorkload(tasks, 1.0).size(), 4u);
  EXPECT_TRUE(TargetWorkload(std::vector<TaskShape>{}, 0.95).empty());
}

// What the default fgd scores against on `s`.
std::vector<WeightedShape> DefaultTarget(const ClusterSnapshot& s) {
  return LiveTargetWorkload(s.observed(), s.standard_workload(), {});
}

TEST(Fragmentation, live_cluster_measure_blends_pods_seen_with_the_standard_shapes) {
  ClusterLedger ledger{GpuResourceNames()};
  for (auto [name, gpus] : {std::pair{"a", 8}, {"b", 8}}) {
    NodeInfo n;
    n.name = name;
    n.allocatable.Set(kGpuResource, testing::Units(gpus));
    ledger.UpsertNode(n);
  }
  // An empty cluster already measures against 1, 2, 4 and 8 GPUs: whole nodes are worth keeping.
  auto empty = ledger.BuildSnapshot();
  std::vector<WeightedShape> empty_target = DefaultTarget(*empty);
  ASSERT_EQ(empty_target.size(), 4u);
  EXPECT_TRUE(empty->observed_workload().empty());
  EXPECT_EQ(empty_target[3].shape.num_gpu, 8);
  EXPECT_DOUBLE_EQ(empty_target[3].weight, 0.25);

  // Node a: 5 of 8 used (3 free); node b: empty (8 free). Pods seen: one of 4 GPUs, one of 1.
  PodInfo p1 = testing::MakePod("p1", {{std::string(kGpuResource), testing::Units(4)}});
  p1.node_name = "a";
  PodInfo p2 = testing::MakePod("p2", {{std::string(kGpuResource), testing::Units(1)}});
  p2.node_name = "a";
  ledger.UpsertPod(p1);
  ledger.UpsertPod(p2);
  auto snapshot = ledger.BuildSnapshot();
  ASSERT_EQ(snapshot->observed_workload().size(), 2u);
  EXPECT_DOUBLE_EQ(snapshot->observed_pods(), 2);
  // Observed: 1 and 4 GPUs, half each; standard: 1, 2, 4, 8, a quarter each. With two pods seen
  // the standard shapes weigh 0.1 + 0.9 x 16 / 18.
  const double prior = 0.1 + 0.9 * 16.0 / 18.0;
  std::map<int32_t, double> weight;
  for (const auto& w : DefaultTarget(*snapshot)) weight[w.shape.num_gpu] = w.weight;
  ASSERT_EQ(weight.size(), 4u);
  EXPECT_NEAR(weight[1], prior * 0.25 + (1 - prior) * 0.5, 1e-12);
  EXPECT_NEAR(weight[2], prior * 0.25, 1e-12);
  EXPECT_NEAR(weight[4], prior * 0.25 + (1 - prior) * 0.5, 1e-12);
  EXPECT_NEAR(weight[8], prior * 0.25, 1e-12);
  ClusterFragmentation f = FragmentationOf(*snapshot);
  EXPECT_DOUBLE_EQ(f.idle_gpus, 11);
  // Node a's 3 free GPUs are fragment for the 4- and 8-GPU shapes.
  EXPECT_NEAR(f.fragmented_gpus, (weight[4] + weight[8]) * 3, 1e-12);
  // A pod deleted stays in what the cluster was asked for: the observed workload is history.
  ledger.DeletePod(PodKey(p1));
  EXPECT_EQ(ledger.BuildSnapshot()->observed_workload().size(), 2u);
}

TEST(TargetWorkload, decayed_counts_favour_recent_shapes) {
  using Clock = DecayedShapeCounts::Clock;
  DecayedShapeCounts counts(std::chrono::seconds(10));
  TaskShape one{0, kMilliPerGpu, 1, {}};
  TaskShape eight{0, kMilliPerGpu, 8, {}};
  Clock::time_point t0 = Clock::now();
  counts.Add(one, t0);
  counts.Add(one, t0);
  counts.Add(eight, t0 + std::chrono::seconds(10));  // the two 1-GPU pods have halved to 1
  ObservedWorkload w = counts.Observed();
  ASSERT_EQ(w.shapes.size(), 2u);
  EXPECT_NEAR(w.shapes[0].weight, 0.5, 1e-9);
  EXPECT_NEAR(w.shapes[1].weight, 0.5, 1e-9);
  EXPECT_NEAR(w.pods, 2, 1e-9);
  // Long forgotten shapes are dropped.
  counts.Add(eight, t0 + std::chrono::seconds(1000));
  ASSERT_EQ(counts.Observed().shapes.size(), 1u);
  EXPECT_EQ(counts.Observed().shapes[0].shape.num_gpu, 8);
  EXPECT_NEAR(counts.Observed().pods, 1, 1e-6);
}

TEST(TargetWorkload, shapes_are_bounded_whatever_the_pods_name) {
  DecayedShapeCounts counts;
  auto now = DecayedShapeCounts::Clock::now();
  TaskShape common{0, kMilliPerGpu, 1, {}};
  counts.Add(common, now);
  counts.Add(common, now);
  for (int i = 0; i < 1000; ++i)
    counts.Add(TaskShape{0, kMilliPerGpu, 1, {"gpu-" + std::to_string(i)}}, now);
  auto w = counts.Observed().shapes;
  EXPECT_EQ(w.size(), DecayedShapeCounts::kMaxShapes);
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [&](const auto& s) { return s.shape == common; }));
}

TEST(Fragmentation, live_cluster_expects_the_mig_profiles_nodes_offer) {
  ClusterLedger ledger{GpuResourceNames()};
  NodeInfo whole;
  whole.name = "whole";
  whole.allocatable.Set(kGpuResource, testing::Units(8));
  ledger.UpsertNode(whole);
  NodeInfo mig;
  mig.name = "mig";
  mig.allocatable.Set("nvidia.com/mig-1g.10gb", testing::Units(7));
  mig.allocatable.Set("nvidia.com/mig-3g.40gb", testing::Units(2));
  ledger.UpsertNode(mig);
  // The standard shapes: 1, 2, 4, 8 GPUs and one slice of each offered profile.
  auto empty = ledger.BuildSnapshot();
  std::vector<WeightedShape> standard(empty->standard_workload().begin(),
                                      empty->standard_workload().end());
  ASSERT_EQ(standard.size(), 6u);
  EXPECT_EQ(standard[4].shape, Slices("1g.10gb", 1));
  EXPECT_EQ(standard[5].shape, Slices("3g.40gb", 1));
  // The gauge counts idle slices: 8 GPUs plus 7/7 and 6/7 of a GPU in slices.
  EXPECT_NEAR(FragmentationOf(*empty).idle_gpus, 8 + (1000 + 6000 / 7) / 1000.0, 1e-9);

  // A MIG pod is observed as its slices.
  PodInfo p = testing::MakePod("p", {{"nvidia.com/mig-3g.40gb", testing::Units(1)}});
  p.node_name = "mig";
  ledger.UpsertPod(p);
  auto snapshot = ledger.BuildSnapshot();
  ASSERT_EQ(snapshot->observed_workload().size(), 1u);
  EXPECT_EQ(snapshot->observed_workload()[0].shape, Slices("3g.40gb", 1));
}

TEST(TargetWorkload, mig_pods_and_profiles_do_not_move_what_device_shapes_weigh) {
  TaskShape one = Shape(0, 1, 1000);
  TaskShape four = Shape(0, 4, 1000);
  // 20 pods seen, half of them 1g slices; the device half is 6 one-GPU and 4 four-GPU pods. FGD's
  // 95% cut over all 20 keeps every shape, so only the blend per kind is at stake here.
  ObservedWorkload with_mig{{{one, 0.3}, {four, 0.2}, {Slices("1g.10gb", 1), 0.5}}, 20};
  ObservedWorkload without{{{one, 0.6}, {four, 0.4}}, 10};
  auto mixed = LiveTargetWorkload(with_mig, StandardShapes({8}, {"1g.10gb", "3g.40gb"}), {});
  auto plain = LiveTargetWorkload(without, StandardShapes({8}), {});
  auto devices = ShapesOfKind(mixed, /*mig=*/false);
  ASSERT_EQ(devices.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(devices[i].shape, plain[i].shape);
    EXPECT_DOUBLE_EQ(devices[i].weight, plain[i].weight);
  }
  // The MIG part: the 1g pods seen, blended with both offered profiles; it sums to 1 on its own.
  auto slices = ShapesOfKind(mixed, /*mig=*/true);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_NEAR(slices[0].weight + slices[1].weight, 1.0, 1e-12);
  EXPECT_GT(slices[0].weight, slices[1].weight);  // 1g: seen and expected
}

TEST(Fragmentation, pods_selecting_a_product_are_observed_pinned_to_it) {
  ClusterLedger ledger{GpuResourceNames()};
  for (const char* product : {"NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"}) {
    ledger.UpsertNode(testing::LabeledNode(product, 8, {{"nvidia.com/gpu.product", product}}).info);
  }
  PodInfo pinned = testing::MakePod("p", {{std::string(kGpuResource), testing::Units(4)}});
  pinned.pins.selector = {{"nvidia.com/gpu.product", PinOperator::kIn, {"NVIDIA-H100-80GB-HBM3"}}};
  ledger.UpsertPod(pinned);
  auto snapshot = ledger.BuildSnapshot();  // the span below points into it
  auto observed = snapshot->observed_workload();
  ASSERT_EQ(observed.size(), 1u);
  EXPECT_EQ(observed[0].shape.gpu_models, std::vector<std::string>{"NVIDIA-H100-80GB-HBM3"});
}

TEST(TargetWorkload, standard_shapes_and_blend) {
  auto shapes = StandardShapes({4, 8, 0, 6});
  std::vector<int32_t> gpus;
  for (const auto& s : shapes) gpus.push_back(s.shape.num_gpu);
  EXPECT_EQ(gpus, (std::vector<int32_t>{1, 2, 4, 6, 8}));
  EXPECT_TRUE(StandardShapes({}).empty());
  // MIG profiles the nodes offer: one slice each, weighing like every other standard shape.
  auto with_mig = StandardShapes({8}, {"1g.10gb", "3g.40gb"});
  ASSERT_EQ(with_mig.size(), 6u);
  EXPECT_EQ(with_mig[4].shape, Slices("1g.10gb", 1));
  EXPECT_EQ(with_mig[5].shape, Slices("3g.40gb", 1));
  // Each kind sums to 1 on its own.
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(with_mig[i].weight, 0.25);
  EXPECT_DOUBLE_EQ(with_mig[4].weight, 0.5);
  EXPECT_DOUBLE_EQ(with_mig[5].weight, 0.5);
  std::vector<WeightedShape> observed = {{TaskShape{0, kMilliPerGpu, 1, {}}, 1.0}};
  auto only_prior = BlendWorkloads({}, shapes, 0.1);  // nothing observed: the prior alone
  EXPECT_EQ(only_prior.size(), shapes.size());
  auto only_observed = BlendWorkloads(observed, {}, 0.9);  // the simulator: no prior
  ASSERT_EQ(only_observed.size(), 1u);
  EXPECT_DOUBLE_EQ(only_observed[0].weight, 1.0);
  auto both = BlendWorkloads(observed, shapes, 0.5);
  double sum = 0;
  for (const auto& w : both) sum += w.weight;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(both[0].weight, 0.5 + 0.5 / 5);  // 1 GPU: observed and standard
}

TEST(TargetWorkload, prior_weighs_like_pods_until_many_are_seen) {
  TargetWorkloadSettings defaults;
  EXPECT_DOUBLE_EQ(PriorShareAfter(defaults, 0), 1);
  EXPECT_DOUBLE_EQ(PriorShareAfter(defaults, 16), 0.55);
  EXPECT_NEAR(PriorShareAfter(defaults, 1e9), 0.1, 1e-6);
  TargetWorkloadSettings plain{.prior_share = 0.3, .prior_pods = 0, .expected = {}};
  EXPECT_DOUBLE_EQ(PriorShareAfter(plain, 0), 0.3);
  EXPECT_DOUBLE_EQ(PriorShareAfter(plain, 5), 0.3);
  TargetWorkloadSettings wild{
      .prior_share = 7, .prior_pods = -3, .expected = {}};  // clamped, never above 1
  EXPECT_DOUBLE_EQ(PriorShareAfter(wild, -2), 1);
}

// Issue #15's burst: two 8-GPU nodes, node a holds a 1-GPU pod; a 4-GPU pod is scored after the
// watch has reported it and the 1-GPU pod, but not yet the 8-GPU pod behind them. Filling node a
// must cost less fragmentation than opening node b, or the 8-GPU pod finds no whole node.
TEST(TargetWorkload, a_burst_first_pods_do_not_give_up_a_whole_node) {
  std::vector<WeightedShape> seen = {{TaskShape{0, kMilliPerGpu, 1, {}}, 0.5},
                                     {TaskShape{0, kMilliPerGpu, 4, {}}, 0.5}};
  auto workload =
      BlendWorkloads(seen, StandardShapes({8}), PriorShareAfter(TargetWorkloadSettings{}, 2));
  // Fragment of node a and node b after the choice, by their free whole GPUs.
  auto fragment = [](std::span<const WeightedShape> w, int free_a, int free_b) {
    std::vector<int64_t> a(static_cast<size_t>(free_a), kMilliPerGpu);
    std::vector<int64_t> b(static_cast<size_t>(free_b), kMilliPerGpu);
    return NodeFragmentMilli(NodeIdle{0, a, ""}, w) + NodeFragmentMilli(NodeIdle{0, b, ""}, w);
  };
  EXPECT_LT(fragment(workload, 3, 8), fragment(workload, 7, 4));
  // With the seen pods at half the blend regardless of their number, the 4-GPU hole wins.
  auto naive = BlendWorkloads(seen, StandardShapes({8}), 0.5);
  EXPECT_GT(fragment(naive, 3, 8), fragment(naive, 7, 4));
}

}  // namespace
}  // namespace gpusched::fragmentation_test
