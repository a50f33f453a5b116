#include "gpusched/plugins/gpu_fit.h"

#include <gtest/gtest.h>

#include <vector>

#include "gpusched/model/device_model.h"
#include "testing/test_support.h"

namespace gpusched::gpu_fit_test {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Units;

struct Case {
  const char* name;
  ResourceList capacity;
  ResourceList allocatable;
  ResourceList used;
  ResourceList request;
  VerdictCode code;
  const char* reason;
};

TEST(GpuFit, verdicts_and_reasons) {
  const Case cases[] = {
      {"fits_exactly",
       {{"nvidia.com/gpu", Units(8)}},
       {{"nvidia.com/gpu", Units(8)}},
       {{"nvidia.com/gpu", Units(6)}},
       {{"nvidia.com/gpu", Units(2)}},
       VerdictCode::kPass,
       ""},
      {"insufficient_free_may_preempt",
       {{"nvidia.com/gpu", Units(8)}},
       {{"nvidia.com/gpu", Units(8)}},
       {{"nvidia.com/gpu", Units(7)}},
       {{"nvidia.com/gpu", Units(2)}},
       VerdictCode::kUnschedulable,
       "Insufficient nvidia.com/gpu"},
      {"resource_not_offered",
       {{"cpu", Units(8)}},
       {{"cpu", Units(8)}},
       {},
       {{"nvidia.com/gpu", Units(1)}},
       VerdictCode::kUnresolvable,
       "node offers no nvidia.com/gpu"},
      {"zero_marker_after_rename_is_not_offered",
       {{"nvidia.com/gpu", 0}, {"nvidia.com/gpu.shared", Units(4)}},
       {{"nvidia.com/gpu", 0}, {"nvidia.com/gpu.shared", Units(4)}},
       {},
       {{"nvidia.com/gpu", Units(1)}},
       VerdictCode::kUnresolvable,
       "node offers no nvidia.com/gpu"},
      {"unhealthy_gpus_make_node_too_small",
       {{"nvidia.com/gpu", Units(8)}},
       {{"nvidia.com/gpu", 0}},
       {},
       {{"nvidia.com/gpu", Units(1)}},
       VerdictCode::kUnresolvable,
       "too few allocatable nvidia.com/gpu on node"},
      {"request_above_node_size",
       {{"nvidia.com/gpu", Units(4)}},
       {{"nvidia.com/gpu", Units(4)}},
       {},
       {{"nvidia.com/gpu", Units(8)}},
       VerdictCode::kUnresolvable,
       "too few allocatable nvidia.com/gpu on node"},
      {"every_requested_resource_must_fit",
       {{"nvidia.com/mig-1g.5gb", Units(16)}, {"nvidia.com/mig-3g.20gb", Units(8)}},
       {{"nvidia.com/mig-1g.5gb", Units(16)}, {"nvidia.com/mig-3g.20gb", Units(8)}},
       {{"nvidia.com/mig-3g.20gb", Units(8)}},
       {{"nvidia.com/mig-1g.5gb", Units(1)}, {"nvidia.com/mig-3g.20gb", Units(1)}},
       VerdictCode::kUnschedulable,
       "Insufficient nvidia.com/mig-3g.20gb"},
      {"shared_units_fit",
       {{"nvidia.com/gpu.shared", Units(4)}},
       {{"nvidia.com/gpu.shared", Units(4)}},
       {{"nvidia.com/gpu.shared", Units(2)}},
       {{"nvidia.com/gpu.shared", Units(2)}},
       VerdictCode::kPass,
       ""},
  };
  GpuFitPlugin plugin;
  ClusterSnapshot snapshot({}, 1);
  for (const auto& c : cases) {
    NodeState node = MakeNode("gpu-node-x", c.allocatable, c.used);
    node.info.capacity = c.capacity;
    PodInfo pod = MakePod("p", c.request);
    Cycle cycle(pod, c.request, snapshot);
    plugin.Prepare(cycle);
    Verdict v = plugin.Filter(cycle, node);
    EXPECT_EQ(v.code, c.code) << c.name;
    EXPECT_EQ(v.reason, c.reason) << c.name;
    EXPECT_EQ(std::string(v.reason).find("gpu-node-x"), std::string::npos) << c.name;
  }
}

// One cycle, two nodes each offering more of another resource than gpusched judges, the two names
// of one length: each node gets its own reason. (The cycle finds a stored reason by the address of
// its prefix, so a prefix built in a temporary could be taken for the next one's.)
TEST(GpuFit, reasons_for_different_resources_stay_apart_within_a_cycle) {
  const ResourceList request = {{"nvidia.com/mig-1g.10gb", Units(1)},
                                {"nvidia.com/mig-2g.10gb", Units(1)}};
  NodeState first = MakeNode(
      "a", {{"nvidia.com/mig-1g.10gb", Units(2000)}, {"nvidia.com/mig-2g.10gb", Units(7)}});
  NodeState second = MakeNode(
      "b", {{"nvidia.com/mig-1g.10gb", Units(7)}, {"nvidia.com/mig-2g.10gb", Units(2000)}});
  PodInfo pod = MakePod("p", request);
  ClusterSnapshot snapshot({}, 1);
  Cycle cycle(pod, request, snapshot);
  GpuFitPlugin plugin;
  plugin.Prepare(cycle);
  EXPECT_EQ(plugin.Filter(cycle, first).reason,
            "node offers more nvidia.com/mig-1g.10gb than gpusched judges (1024)");
  EXPECT_EQ(plugin.Filter(cycle, second).reason,
            "node offers more nvidia.com/mig-2g.10gb than gpusched judges (1024)");
}

// Two devices at 600 free milli-GPU each: 1200 free in all, yet no device free for a whole GPU.
// The shared model (the simulator's, whose table keeps the node's shares) sees that; the live
// server's counts whole devices and has no shares to read.
TEST(GpuFit, the_snapshot_device_model_decides_the_per_device_check) {
  const std::vector<NodeState> nodes = {
      MakeNode("n", {{"nvidia.com/gpu", Units(2)}}, {{"nvidia.com/gpu", 800}})};
  const std::vector<std::vector<int32_t>> shares = {{600, 600}};
  const DeviceShares table(nodes, shares);
  const NodeState& node = nodes[0];
  const ResourceList request = {{"nvidia.com/gpu", Units(1)}};
  PodInfo pod = MakePod("p", request);
  GpuFitPlugin plugin;
  ClusterSnapshot shared(
      {.generation = 1, .running = testing::TallyOf(DeviceModel::SharedDevices(table))});
  Cycle in_shared(pod, request, shared);
  plugin.Prepare(in_shared);
  Verdict v = plugin.Filter(in_shared, node);
  EXPECT_EQ(v.code, VerdictCode::kUnschedulable);
  EXPECT_EQ(v.reason, "no GPU device with enough free");
  ClusterSnapshot whole({}, 1);
  Cycle in_whole(pod, request, whole);
  plugin.Prepare(in_whole);
  EXPECT_EQ(plugin.Filter(in_whole, node).code, VerdictCode::kPass);
  // A node the table does not cover, the same in all but its address, has its units counted whole.
  const NodeState copy = node;
  EXPECT_EQ(plugin.Filter(in_shared, copy).code, VerdictCode::kPass);
}

}  // namespace
}  // namespace gpusched::gpu_fit_test
