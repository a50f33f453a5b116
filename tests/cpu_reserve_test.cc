#include "gpusched/plugins/cpu_reserve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/policy/engine_builder.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::cpu_reserve_test {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Units;

TaskShape Shape(int64_t cpu_milli, int32_t gpus, int64_t milli = kMilliPerGpu) {
  return TaskShape{cpu_milli, milli, gpus, {}};
}

TEST(CpuReserve, demand_ratio_is_cpu_per_gpu_of_the_gpu_shapes) {
  // 0.5 x (12 CPU, 1 GPU) + 0.25 x (8 CPU, 2 GPUs): 8 CPU per 1 GPU. The CPU-only quarter takes
  // no GPU and says nothing about what GPUs need.
  std::vector<WeightedShape> workload = {
      {Shape(12000, 1), 0.5}, {Shape(8000, 2), 0.25}, {Shape(64000, 0), 0.25}};
  ASSERT_TRUE(CpuPerGpuMilli(workload).has_value());
  EXPECT_DOUBLE_EQ(*CpuPerGpuMilli(workload), 8.0);
  // A share counts by its milli-GPU: 4 CPU with half a GPU is 8 CPU per GPU.
  EXPECT_DOUBLE_EQ(*CpuPerGpuMilli(std::vector<WeightedShape>{{Shape(4000, 1, 500), 1}}), 8.0);
  EXPECT_FALSE(CpuPerGpuMilli(std::vector<WeightedShape>{{Shape(0, 2), 1}}).has_value());
  EXPECT_FALSE(CpuPerGpuMilli(std::vector<WeightedShape>{{Shape(4000, 0), 1}}).has_value());
  EXPECT_FALSE(CpuPerGpuMilli({}).has_value());
}

TEST(CpuReserve, stranded_gpus_are_those_the_free_cpu_cannot_serve) {
  std::vector<int64_t> devices(8, kMilliPerGpu);
  devices[0] = 500;
  // 7.5 GPUs idle, 48 CPU free, 12 CPU per GPU: 4 GPUs servable, 3.5 stranded.
  NodeIdle node{.cpu_milli = 48000, .gpu_free_milli = devices, .model = ""};
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(node, 12.0), 3500);
  node.cpu_milli = 96000;
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(node, 12.0), 0);
  node.cpu_milli = -1000;  // overcommitted: nothing servable, never a negative amount
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(node, 12.0), 7500);
}

// Through the engine, as the simulator runs it: NewCycle prepares the plugin from the snapshot's
// observed workload (12 CPU per GPU here).
class CpuReserveEngine : public ::testing::Test {
 protected:
  CpuReserveEngine()
      : nodes_{Node("cpu-poor", 8, 48), Node("cpu-rich", 2, 104), Node("no-cpu", 8, -1)},
        snapshot_({.nodes = nodes_,
                   .generation = 1,
                   .observed_workload = ObservedWorkload{{{Shape(12000, 1), 1}}, 10}}) {
    ProfileSpec profile;
    profile.plugins = {{"gpu-fit", {true, 0, nullptr}},
                       {std::string(CpuReservePlugin::kName), {true, 1, nullptr}}};
    engine_ = BuildEngine(DefaultPolicySpec(), profile);
  }

  static ClusterSnapshot::NodePtr Node(const std::string& name, int64_t gpus, int64_t cpus) {
    ResourceList allocatable{{std::string(kGpuResource), Units(gpus)}};
    if (cpus >= 0) allocatable.Set("cpu", Units(cpus));
    return std::make_shared<const NodeState>(MakeNode(name, allocatable));
  }

  // The plugin's score per node, in the order of nodes_.
  std::vector<double> Scores(const PodInfo& pod) {
    auto cycle = engine_->NewCycle(pod, snapshot_);
    std::vector<const NodeState*> candidates;
    for (const auto& n : nodes_) candidates.push_back(n.get());
    std::vector<double> out;
    for (const auto& e : engine_->Evaluate(*cycle, candidates)) out.push_back(e.combined);
    return out;
  }

  std::vector<ClusterSnapshot::NodePtr> nodes_;
  ClusterSnapshot snapshot_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(CpuReserveEngine, cpu_only_pods_keep_off_nodes_whose_gpus_need_the_cpu) {
  // cpu-poor: 8 idle GPUs, 48 CPU serve 4 of them; 12 more CPU taken strands one more GPU.
  // cpu-rich: 2 GPUs, 104 CPU; nothing stranded before or after. no-cpu: not judged (50).
  std::vector<double> s = Scores(MakePod("cpu-job", {{"cpu", Units(12)}}));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 100 / (1 + std::exp(1.0)), 1e-9);
  EXPECT_DOUBLE_EQ(s[1], 50);
  EXPECT_DOUBLE_EQ(s[2], 50);
  EXPECT_LT(s[0], s[1]);
}

TEST_F(CpuReserveEngine, cpu_light_gpu_pods_fill_the_gpus_that_lack_cpu) {
  // One GPU with 2 CPU on cpu-poor: one stranded GPU taken, 2/12 of a servable one lost.
  std::vector<double> s =
      Scores(MakePod("light", {{"cpu", Units(2)}, {std::string(kGpuResource), Units(1)}}));
  EXPECT_NEAR(s[0], 100 / (1 + std::exp(-(1.0 - 2.0 / 12))), 1e-9);
  EXPECT_DOUBLE_EQ(s[1], 50);
  EXPECT_GT(s[0], s[1]);
}

TEST_F(CpuReserveEngine, pods_without_cpu_requests_are_not_scored) {
  const CpuReservePlugin plugin;
  auto gpu_only =
      engine_->NewCycle(MakePod("g", {{std::string(kGpuResource), Units(1)}}), snapshot_);
  EXPECT_FALSE(plugin.ScoresPod(*gpu_only));
  auto with_cpu = engine_->NewCycle(MakePod("c", {{"cpu", Units(1)}}), snapshot_);
  EXPECT_TRUE(plugin.ScoresPod(*with_cpu));
  // Nothing observed asks for CPU with a GPU: no ratio, no score.
  ClusterSnapshot unknown({.nodes = nodes_,
                           .generation = 2,
                           .observed_workload = ObservedWorkload{{{Shape(0, 1), 1}}, 1}});
  EXPECT_FALSE(plugin.ScoresPod(*engine_->NewCycle(MakePod("c", {{"cpu", Units(1)}}), unknown)));
  // No node declares CPU (the live inventory keeps only extended resources): nothing to weigh.
  ClusterSnapshot live({.nodes = {nodes_[2]},
                        .generation = 3,
                        .observed_workload = ObservedWorkload{{{Shape(12000, 1), 1}}, 10}});
  EXPECT_FALSE(plugin.ScoresPod(*engine_->NewCycle(MakePod("c", {{"cpu", Units(1)}}), live)));
}

}  // namespace
}  // namespace gpusched::cpu_reserve_test
