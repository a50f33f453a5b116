// The FGD paper's packing scores on hand-made nodes, with the values worked out by hand from the
// published formulas (including their integer truncation).
#include "gpusched/plugins/packing_scores.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "gpusched/model/device_model.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/packing/target_workload.h"
#include "testing/test_support.h"

namespace gpusched::packing_scores_test {
namespace {

using testing::Units;

// A node with per-device free milli-GPU and CPU, as the simulator models it: the node, and the
// shares the simulator keeps apart from it.
struct SimNode {
  NodeState state;
  std::vector<int32_t> shares;
  // A table that keeps this node's shares (and lives no longer than the node).
  DeviceShares table() const { return DeviceShares({&state, 1}, {&shares, 1}); }
};

SimNode MakeSimNode(int64_t cpu_free, std::vector<int32_t> devices) {
  NodeState n;
  n.info.name = "n";
  n.info.allocatable.Set("cpu", 64000);
  n.info.allocatable.Set(kGpuResource, static_cast<int64_t>(devices.size()) * kMilliPerGpu);
  n.used.Set("cpu", 64000 - cpu_free);
  int64_t used = 0;
  for (int32_t d : devices) used += kMilliPerGpu - d;
  n.used.Set(kGpuResource, used);
  return SimNode{std::move(n), std::move(devices)};
}

PodInfo SimPod(int64_t cpu, int64_t gpu_milli) {
  ResourceList r;
  r.Set("cpu", cpu);
  if (gpu_milli > 0) r.Set(kGpuResource, gpu_milli);
  return testing::MakePod("p", r);
}

struct Scored {
  std::vector<WeightedShape> workload;
  ClusterSnapshot snapshot;  // whole devices: for what reads no node (Normalize)
  explicit Scored(std::vector<WeightedShape> w)
      : workload(w),
        snapshot({.generation = 1, .observed_workload = ObservedWorkload{std::move(w), 1}}) {}
  // `node` scored in a snapshot of the simulator's model, whose table keeps the node's shares.
  template <class P>
  double Score(const P& plugin, const PodInfo& pod, const SimNode& node) const {
    const DeviceShares table = node.table();
    ClusterSnapshot shared({.generation = 1,
                            .observed_workload = ObservedWorkload{workload, 1},
                            .running = testing::TallyOf(DeviceModel::SharedDevices(table))});
    Cycle cycle(pod, pod.requests, shared);
    if constexpr (std::is_base_of_v<PreparePlugin, P>) plugin.Prepare(cycle);  // as NewCycle does
    return plugin.Score(cycle, node.state);
  }
};

TaskShape Shape(int64_t cpu, int32_t gpus, int64_t milli) {
  TaskShape s;
  s.cpu_milli = cpu;
  s.num_gpu = gpus;
  s.gpu_milli = milli;
  return s;
}

int64_t Sigmoid100(double delta_milli) {
  return static_cast<int64_t>(100.0 / (1.0 + std::exp(-delta_milli / 1000)));
}

TEST(FgdScore, a_share_goes_where_it_grows_fragmentation_least) {
  // Workload: half 500-milli shares, half whole GPUs. Node devices {1000, 500}.
  Scored s({{Shape(1000, 1, 500), 0.5}, {Shape(1000, 1, 1000), 0.5}});
  SimNode node = MakeSimNode(32000, {1000, 500});
  // Before: share shape fits, no device below 500: 0; whole shape fits, 500 is fragment: 250.
  // A share on device 1 -> {1000, 0}: 0 and 0, fragment falls by 250: int(100*sigmoid(0.25)).
  // On device 0 -> {500, 500}: share fits (0), whole does not (all 1000 idle): 500.
  FgdPlugin fgd;
  EXPECT_EQ(s.Score(fgd, SimPod(1000, 500), node), Sigmoid100(250));
  IdleBuffers buffers;
  const DeviceShares table = node.table();
  NodeIdle idle = IdleOf(node.state, DeviceModel::SharedDevices(table), buffers);
  FgdChoice choice = FgdScore(idle, ShapeOf(SimPod(1000, 500)), s.workload);
  EXPECT_EQ(choice.device, 1);
  EXPECT_EQ(choice.score, Sigmoid100(250));
}

TEST(FgdScore, cpu_use_that_starves_a_gpu_shape_scores_low) {
  // One whole-GPU shape needing 8 cores. A CPU-only pod taking the node below 8 free cores makes
  // both idle GPUs fragment (Q4, lack of CPU): fragment 0 -> 2000.
  Scored s({{Shape(8000, 1, 1000), 1.0}});
  SimNode node = MakeSimNode(10000, {1000, 1000});
  FgdPlugin fgd;
  EXPECT_EQ(s.Score(fgd, SimPod(4000, 0), node), Sigmoid100(-2000));
  EXPECT_EQ(s.Score(fgd, SimPod(1000, 0), node), 50);  // 9 cores left: nothing changes
}

// FgdScores remembers one score per node of equal GPUs and equal CPU asks reached: on a grid of
// nodes around every ask, of whole GPUs, shares and MIG slices, asked in a mixed order and twice,
// it answers what FgdScore does.
TEST(FgdScores, remembered_scores_are_fgd_scores) {
  TaskShape slices;
  slices.cpu_milli = 3000;
  slices.mig_profile = "1g.10gb";
  slices.mig_count = 1;
  std::vector<WeightedShape> workload = {{Shape(8000, 1, 1000), 0.4},
                                         {Shape(4000, 2, 1000), 0.3},
                                         {Shape(2000, 1, 500), 0.2},
                                         {slices, 0.1}};
  std::vector<std::vector<int64_t>> devices = {
      {1000, 1000, 0, 0}, {1000, 0, 1000, 0}, {500, 1000, 0, 0}, {1000, 1000, 1000, 1000}, {}};
  std::vector<IdleSlices> mig = {{"1g.10gb", 2, 1}};
  for (const TaskShape& pod : {Shape(3000, 1, 1000), Shape(0, 2, 1000), Shape(5000, 1, 500)}) {
    FgdScores scores(pod, workload);
    for (int round = 0; round < 2; ++round) {
      for (int64_t cpu = -1000; cpu <= 14000; cpu += 500) {
        for (const auto& free : devices) {
          for (bool with_mig : {false, true}) {
            NodeIdle node{.cpu_milli = cpu + round, .gpu_free_milli = free, .model = "A100"};
            if (with_mig) node.mig_free = mig;
            ASSERT_EQ(scores.Of(node), FgdScore(node, pod, workload).score)
                << "cpu " << cpu << " pod cpu " << pod.cpu_milli;
          }
        }
      }
    }
    NodeIdle unbounded{.cpu_milli = std::numeric_limits<int64_t>::max(),
                       .gpu_free_milli = devices[0],
                       .model = "A100"};
    EXPECT_EQ(scores.Of(unbounded), FgdScore(unbounded, pod, workload).score);
  }
}

TEST(BestFit, scores_by_what_is_left_and_normalizes_min_max_in_integers) {
  Scored s({});
  BestFitPlugin plugin;
  PodInfo pod = SimPod(8000, 1000);
  // r = 0.5 * (cpu left after) / 128 cores + 0.5 * (GPU left after) / 8 GPUs.
  SimNode tight = MakeSimNode(16000, {1000, 0});     // r = .5*8/128 + 0 = 0.03125 -> 96
  SimNode roomy = MakeSimNode(64000, {1000, 1000});  // r = .5*56/128 + .5*1/8 = 0.28125 -> 71
  EXPECT_EQ(s.Score(plugin, pod, tight), 96);
  EXPECT_EQ(s.Score(plugin, pod, roomy), 71);
  std::vector<double> scores = {96, 71, 80};
  Cycle cycle(pod, pod.requests, s.snapshot);
  plugin.Normalize(cycle, scores);
  EXPECT_EQ(scores, (std::vector<double>{100, 0, 36}));  // (80-71)*100/25 = 36
  std::vector<double> equal = {50, 50};
  plugin.Normalize(cycle, equal);
  EXPECT_EQ(equal, (std::vector<double>{0, 0}));
}

TEST(DotProduct, aligned_free_and_requested_vectors_score_low) {
  Scored s({});
  DotProductPlugin plugin;
  PodInfo pod = SimPod(64000, 4000);
  // d = (64/128 * 64/128 + 2/8 * 4/8) / 2 = (0.25 + 0.125) / 2 = 0.1875 -> int(81.25) = 81.
  EXPECT_EQ(s.Score(plugin, pod, MakeSimNode(64000, {1000, 1000, 0, 0})), 81);
}

TEST(GpuPacking, prefers_shared_devices_then_used_nodes_then_empty_ones) {
  Scored s({});
  GpuPackingPlugin plugin;
  PodInfo share = SimPod(1000, 300);
  // An untouched 8-GPU node: max(33 - 8, 8) = 25; 2-GPU: 31.
  EXPECT_EQ(s.Score(plugin, share, MakeSimNode(8000, std::vector<int32_t>(8, 1000))), 25);
  EXPECT_EQ(s.Score(plugin, share, MakeSimNode(8000, {1000, 1000})), 31);
  // A used node whose least-free fitting device is whole: max(50 - 1, 33) = 49.
  EXPECT_EQ(s.Score(plugin, share, MakeSimNode(8000, {1000, 0})), 49);
  // A shared device with 400 free: max(100 - 40 / 10, 50) = 96.
  EXPECT_EQ(s.Score(plugin, share, MakeSimNode(8000, {1000, 400})), 96);
  EXPECT_EQ(s.Score(plugin, SimPod(1000, 0), MakeSimNode(8000, {1000, 400})), 0);  // CPU-only pods
}

TEST(PackingScores, on_live_nodes_devices_come_from_whole_gpu_counts) {
  // The live server has no per-device state: free devices are the node's free whole GPUs.
  NodeState live = testing::MakeNode("n", ResourceList{{std::string(kGpuResource), Units(4)}},
                                     ResourceList{{std::string(kGpuResource), Units(1)}});
  IdleBuffers buffers;
  NodeIdle idle = IdleOf(live, DeviceModel::WholeDevices(), buffers);
  EXPECT_EQ(buffers.devices, (std::vector<int64_t>{1000, 1000, 1000, 0}));
  EXPECT_EQ(idle.cpu_milli, std::numeric_limits<int64_t>::max());  // no CPU declared: no limit
  // The snapshot's model decides: shares are read only where it keeps them for the node.
  const std::vector<int32_t> shares = {500, 500, 500, 500};
  const DeviceShares table({&live, 1}, {&shares, 1});
  IdleOf(live, DeviceModel::SharedDevices(table), buffers);
  EXPECT_EQ(buffers.devices, (std::vector<int64_t>{500, 500, 500, 500}));
  const DeviceShares none;
  IdleOf(live, DeviceModel::SharedDevices(none), buffers);
  EXPECT_EQ(buffers.devices, (std::vector<int64_t>{1000, 1000, 1000, 0}));
}

// The policy's targetWorkload reaches fgd as its own settings: fgd prepares the blend they give
// once per cycle instead of the snapshot's default one.
TEST(FgdScore, policy_target_workload_replaces_the_default_blend) {
  // Expected before any pod is seen: the standard shapes of 8-GPU nodes (1, 2, 4, 8 GPUs).
  ClusterSnapshot snapshot({.generation = 1, .standard_workload = StandardShapes({8})});
  PodInfo pod = SimPod(0, 1000);
  NodeState empty = MakeSimNode(64000, std::vector<int32_t>(8, 1000)).state;
  NodeState two_free = MakeSimNode(64000, {1000, 1000, 0, 0, 0, 0, 0, 0}).state;
  auto score = [&](const FgdPlugin& plugin, const NodeState& node) {
    Cycle cycle(pod, pod.requests, snapshot);
    plugin.Prepare(cycle);
    return plugin.Score(cycle, node);
  };
  FgdPlugin standard;
  EXPECT_GT(score(standard, two_free), score(standard, empty));  // keeps the whole node whole
  // Expecting nothing but 1-GPU pods, no placement fragments anything: the two score alike.
  TargetWorkloadSettings ones;
  ones.prior_share = 1;
  ones.expected = {{TaskShape{0, kMilliPerGpu, 1, {}}, 1.0}};
  FgdPlugin only_ones(ones);
  EXPECT_EQ(score(only_ones, two_free), score(only_ones, empty));
}

// consolidate's order is a hash of the node name. Given the node's number in the snapshot (as the
// extender's candidates carry it) it reads the hash the snapshot's index keeps; without one it
// hashes the name: the two must agree on every node, and a name the snapshot lacks still scores.
TEST(Consolidate, the_kept_name_hashes_score_as_hashing_the_names_does) {
  std::vector<ClusterSnapshot::NodePtr> nodes;
  for (int i = 0; i < 300; ++i) {
    std::string name = "ip-10-0-" + std::to_string(i / 7) + "-" + std::to_string(i) +
                       ".us-west-2.compute.internal";
    nodes.push_back(std::make_shared<const NodeState>(
        testing::MakeNode(name, ResourceList{{"nvidia.com/gpu", Units(8)}})));
  }
  ClusterSnapshot snapshot(nodes, 1);
  ResourceList request{{"nvidia.com/gpu", Units(1)}};
  PodInfo pod = testing::MakePod("p", request);
  Cycle cycle(pod, request, snapshot);
  ConsolidatePlugin consolidate;
  std::set<double> distinct;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i]->info.name;
    ASSERT_EQ(snapshot.IndexOf(name), i);
    const double kept = consolidate.ScoreName(cycle, name, i);
    EXPECT_EQ(kept, consolidate.ScoreName(cycle, name, NodeIndex::kAbsent)) << name;
    distinct.insert(kept);
  }
  EXPECT_EQ(distinct.size(), nodes.size());  // a fixed order: every node its own place
  EXPECT_GE(consolidate.ScoreName(cycle, "not-in-the-snapshot", NodeIndex::kAbsent), 0.0);
}

}  // namespace
}  // namespace gpusched::packing_scores_test
