#include "gpusched/plugins/gpu_binpack.h"
#include "gpusched/packing/in_tree_scores.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::gpu_binpack_test {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Units;

double ScoreOf(const GpuBinpackPlugin& plugin, const NodeState& node, const ResourceList& request) {
  ClusterSnapshot snapshot({}, 1);
  PodInfo pod = MakePod("p", request);
  Cycle cycle(pod, request, snapshot);
  return plugin.Score(cycle, node);
}

// Worked examples of kube-scheduler's MostAllocated (noderesources/most_allocated.go):
// score_r = min(requested, allocatable) * 100 / allocatable (integer), then the weighted
// integer mean over the resources the pod asks for and the node offers.
TEST(GpuBinpack, matches_kube_scheduler_most_allocated_on_worked_examples) {
  GpuBinpackPlugin plugin{ResourceWeights{}};
  auto gpu_node = [](int64_t alloc, int64_t used) {
    return MakeNode("n", ResourceList{{"nvidia.com/gpu", Units(alloc)}},
                    ResourceList{{"nvidia.com/gpu", Units(used)}});
  };
  ResourceList two{{"nvidia.com/gpu", Units(2)}};
  EXPECT_EQ(ScoreOf(plugin, gpu_node(8, 2), two), 50);   // (2+2)*100/8
  EXPECT_EQ(ScoreOf(plugin, gpu_node(8, 0), two), 25);   // 2*100/8
  EXPECT_EQ(ScoreOf(plugin, gpu_node(8, 7), two), 100);  // capped at allocatable
  EXPECT_EQ(ScoreOf(plugin, gpu_node(3, 0), ResourceList{{"nvidia.com/gpu", Units(1)}}), 33);
  EXPECT_EQ(ScoreOf(plugin, gpu_node(0, 0), two), 0);  // node without the resource
}

TEST(GpuBinpack, per_resource_weights_use_integer_weighted_mean) {
  ResourceWeights weights;
  weights.by_name = {{"nvidia.com/gpu", 3}};
  weights.default_weight = 1;
  GpuBinpackPlugin plugin{weights};
  NodeState node = MakeNode(
      "n", ResourceList{{"nvidia.com/gpu", Units(8)}, {"nvidia.com/mig-1g.5gb", Units(16)}},
      ResourceList{{"nvidia.com/gpu", Units(4)}, {"nvidia.com/mig-1g.5gb", Units(5)}});
  ResourceList request{{"nvidia.com/gpu", Units(2)}, {"nvidia.com/mig-1g.5gb", Units(1)}};
  // gpu: 6*100/8 = 75 (w3); mig: 6*100/16 = 37 (w1); (225 + 37) / 4 = 65
  EXPECT_EQ(ScoreOf(plugin, node, request), 65);
}

TEST(GpuBinpack, zero_weight_and_unoffered_resources_are_skipped) {
  ResourceWeights weights;
  weights.by_name = {{"nvidia.com/gpu.shared", 0}};
  GpuBinpackPlugin plugin{weights};
  NodeState node = MakeNode("n", ResourceList{{"nvidia.com/gpu", Units(4)}});
  ResourceList request{{"nvidia.com/gpu", Units(1)},
                       {"nvidia.com/gpu.shared", Units(1)},
                       {"nvidia.com/mig-1g.5gb", Units(1)}};
  EXPECT_EQ(ScoreOf(plugin, node, request), 25);
}

TEST(GpuBinpack, most_requested_score_edge_cases) {
  EXPECT_EQ(MostRequestedScore(0, 0), 0);
  EXPECT_EQ(MostRequestedScore(5, 4), 100);
  EXPECT_EQ(MostRequestedScore(1, 3), 33);
}

}  // namespace
}  // namespace gpusched::gpu_binpack_test
