// The FGD fragmentation measure on hand-made nodes and workloads, and its live-cluster form.
#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/metrics/cluster_fragmentation.h"
#include "gpusched/packing/fragmentation.h"
#include "testing/test_support.h"

namespace gpusched {
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

TEST(Fragmentation, live_cluster_measure_uses_the_bound_pods_gpu_counts) {
  ClusterLedger ledger{GpuResourceNames()};
  for (auto [name, gpus] : {std::pair{"a", 8}, {"b", 8}}) {
    NodeInfo n;
    n.name = name;
    n.allocatable.Set(kGpuResource, testing::Units(gpus));
    ledger.UpsertNode(n);
  }
  // Node a: 5 of 8 used (3 free); node b: empty (8 free). Workload: 4-GPU pods only.
  PodInfo p1 = testing::MakePod("p1", {{std::string(kGpuResource), testing::Units(4)}});
  p1.node_name = "a";
  PodInfo p2 = testing::MakePod("p2", {{std::string(kGpuResource), testing::Units(1)}});
  p2.node_name = "a";
  ledger.UpsertPod(p1);
  ledger.UpsertPod(p2);
  auto snapshot = ledger.BuildSnapshot();
  ASSERT_EQ(snapshot->target_workload().size(), 2u);
  EXPECT_EQ(snapshot->target_workload()[0].shape.num_gpu, 4);  // equal counts: larger shape first
  EXPECT_EQ(snapshot->target_workload()[1].shape.num_gpu, 1);
  ClusterFragmentation f = FragmentationOf(*snapshot);
  EXPECT_DOUBLE_EQ(f.idle_gpus, 11);
  // Shapes 1 GPU and 4 GPUs, half each: node a's 3 free GPUs are fragment for the 4-GPU shape.
  EXPECT_DOUBLE_EQ(f.fragmented_gpus, 0.5 * 3);
  ledger.DeletePod(ClusterLedger::PodKey(p1));
  auto after = ledger.BuildSnapshot();
  ASSERT_EQ(after->target_workload().size(), 1u);
  EXPECT_EQ(after->target_workload()[0].shape.num_gpu, 1);
}

}  // namespace
}  // namespace gpusched
