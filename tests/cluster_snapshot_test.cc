#include "gpusched/cluster/cluster_snapshot.h"

#include <gtest/gtest.h>

#include <optional>

#include "gpusched/cluster/node_index.h"
#include "gpusched/model/device_model.h"
#include "gpusched/util/text_store.h"
#include "testing/test_support.h"

namespace gpusched::cluster_snapshot_test {
namespace {

using testing::Units;

TEST(NodeIndex, finds_every_name_and_nothing_else) {
  std::vector<std::string> owned;
  for (int i = 0; i < 20000; ++i) owned.push_back("gpu-node-" + std::to_string(i));
  std::vector<std::string_view> names(owned.begin(), owned.end());
  NodeIndex index(names);
  for (uint32_t i = 0; i < names.size(); ++i) ASSERT_EQ(index.Find(names[i]), i) << names[i];
  EXPECT_EQ(index.Find("gpu-node-20000"), NodeIndex::kAbsent);
  EXPECT_EQ(index.Find("gpu-node-"), NodeIndex::kAbsent);
  EXPECT_EQ(index.Find("gpu-node-1 "), NodeIndex::kAbsent);
  EXPECT_EQ(index.Find(""), NodeIndex::kAbsent);
}

TEST(NodeIndex, empty_index_finds_nothing) {
  EXPECT_EQ(NodeIndex().Find("a"), NodeIndex::kAbsent);
  EXPECT_EQ(NodeIndex(std::span<const std::string_view>{}).Find("a"), NodeIndex::kAbsent);
  std::vector<std::string_view> asked = {"a", ""};
  std::vector<uint32_t> out(asked.size(), 0);
  NodeIndex().FindAll(asked, out);
  EXPECT_EQ(out, std::vector<uint32_t>(2, NodeIndex::kAbsent));
}

// Looked up in groups, a request's names get what one by one they would: known names in any order,
// unknown ones, near misses and repeats, over group boundaries and a short last group.
TEST(NodeIndex, finds_a_list_as_one_by_one) {
  std::vector<std::string> owned;
  for (int i = 0; i < 3000; ++i) owned.push_back("gpu-node-" + std::to_string(i));
  std::vector<std::string_view> names(owned.begin(), owned.end());
  NodeIndex index(names);
  std::vector<std::string> asked_owned;
  for (int i = 0; i < 1237; ++i) {
    const int n = (i * 7919) % 3100;  // past 2999: unknown
    asked_owned.push_back(i % 5 == 4 ? "gpu-node-" + std::to_string(n) + "x"
                                     : "gpu-node-" + std::to_string(n));
  }
  asked_owned.push_back("gpu-node-0");
  asked_owned.push_back("");
  std::vector<std::string_view> asked(asked_owned.begin(), asked_owned.end());
  std::vector<uint32_t> out(asked.size(), 0);
  index.FindAll(asked, out);
  size_t known = 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    ASSERT_EQ(out[i], index.Find(asked[i])) << asked[i];
    if (out[i] == NodeIndex::kAbsent) continue;
    ASSERT_EQ(names[out[i]], asked[i]);
    ++known;
  }
  EXPECT_GT(known, 900u);
  EXPECT_LT(known, asked.size());
}

TEST(TextStore, kept_text_stays_put_as_the_store_grows) {
  TextStore store(8);
  std::vector<std::pair<std::string, std::string_view>> kept;
  for (int i = 0; i < 3000; ++i) {
    std::string s(static_cast<size_t>(i % 50), static_cast<char>('a' + i % 26));
    kept.emplace_back(s, store.Keep(s));
  }
  std::string big(100000, 'x');
  std::string_view big_view = store.Keep(big);
  for (const auto& [original, view] : kept) ASSERT_EQ(view, original);
  EXPECT_EQ(big_view, big);
  EXPECT_NE(big_view.data(), big.data());  // a copy
}

// A node with every part of its scheduling content set, to vary one part at a time.
NodeState RichNode(const std::string& name) {
  NodeState n = testing::MakeNode(name, ResourceList{{"nvidia.com/gpu", Units(8)}},
                                  ResourceList{{"nvidia.com/gpu", Units(2)}});
  n.info.gpu.product = "NVIDIA-H100-80GB-HBM3";
  n.info.gpu.memory_mib = 81559;
  n.info.resource_version = "100";
  n.pod_count = 2;
  return n;
}

using Shares = std::vector<std::vector<int32_t>>;

// The content classes of the nodes "base" and "other" in a snapshot of whole devices, or, given
// `shares` (per node), of the simulator's model with a table keeping them.
std::vector<uint32_t> ClassesOf(const std::vector<NodeState>& nodes,
                                const std::optional<Shares>& shares = std::nullopt) {
  const DeviceShares table = shares ? DeviceShares(nodes, *shares) : DeviceShares();
  const std::shared_ptr<const RunningTally> running =
      shares ? testing::TallyOf(DeviceModel::SharedDevices(table)) : nullptr;
  // The snapshot holds the very nodes the table covers, so its classes see their shares (the
  // simulator's holds copies of the cluster as its run starts, which need none): pointers that own
  // nothing, as `nodes` outlives the snapshot.
  std::vector<ClusterSnapshot::NodePtr> ptrs;
  for (const auto& n : nodes) {
    ptrs.push_back(ClusterSnapshot::NodePtr(ClusterSnapshot::NodePtr(), &n));
  }
  ClusterSnapshot snapshot({.nodes = std::move(ptrs), .generation = 1, .running = running});
  std::vector<uint32_t> out;
  for (const auto& name : {"base", "other"}) {
    out.push_back(snapshot.classes()[snapshot.IndexOf(name)]);
  }
  return out;
}

TEST(ClusterSnapshot, nodes_differing_only_in_name_version_or_pod_count_share_a_class) {
  NodeState other = RichNode("other");
  other.info.resource_version = "200";
  other.pod_count = 7;
  auto classes = ClassesOf({RichNode("base"), other});
  EXPECT_EQ(classes[0], classes[1]);
}

TEST(ClusterSnapshot, any_difference_in_scheduling_content_splits_the_class) {
  std::vector<std::pair<std::string, std::function<void(NodeState&)>>> changes = {
      {"used", [](NodeState& n) { n.used.Set("nvidia.com/gpu", Units(3)); }},
      {"allocatable", [](NodeState& n) { n.info.allocatable.Set("nvidia.com/gpu", Units(7)); }},
      {"capacity", [](NodeState& n) { n.info.capacity.Set("nvidia.com/gpu.shared", Units(4)); }},
      {"cordon", [](NodeState& n) { n.info.unschedulable = true; }},
      {"product", [](NodeState& n) { n.info.gpu.product = "NVIDIA-A100-SXM4-80GB"; }},
      {"memory label", [](NodeState& n) { n.info.gpu.memory_mib = 40960; }},
      {"driver upgrade", [](NodeState& n) { n.info.gpu.driver_upgrade_state = "upgrade-failed"; }},
      {"MIG profile label",
       [](NodeState& n) { n.info.gpu.mig_profiles.emplace_back().profile = "1g.10gb"; }},
  };
  for (const auto& [what, change] : changes) {
    NodeState other = RichNode("other");
    change(other);
    auto whole = ClassesOf({RichNode("base"), other});
    EXPECT_NE(whole[0], whole[1]) << what;
    auto shared = ClassesOf({RichNode("base"), other}, Shares{{1000, 500}, {1000, 500}});
    EXPECT_NE(shared[0], shared[1]) << what << ", equal shares";
  }
}

// The shares per device are the simulator's: two nodes alike but for their shares are apart in a
// snapshot whose device model keeps them, alike in the live server's, which has none.
TEST(ClusterSnapshot, device_shares_split_a_class_only_where_the_snapshot_keeps_shares) {
  const std::vector<NodeState> nodes = {RichNode("base"), RichNode("other")};
  auto shared = ClassesOf(nodes, Shares{{1000, 1000}, {1000, 500}});
  EXPECT_NE(shared[0], shared[1]);
  EXPECT_EQ(ClassesOf(nodes, Shares{{1000, 500}, {1000, 500}}), (std::vector<uint32_t>{0, 0}));
  auto whole = ClassesOf(nodes);
  EXPECT_EQ(whole[0], whole[1]);
  const DeviceModel live = DeviceModel::WholeDevices();
  EXPECT_EQ(SchedulingContentHash(nodes[0], live), SchedulingContentHash(RichNode("x"), live));
  EXPECT_TRUE(SameSchedulingContent(nodes[1], RichNode("x"), live));
  // Under shares, a node the table does not cover is compared by what it has: no shares.
  const Shares shares = {{1000, 1000}, {1000, 500}};
  const DeviceShares table(nodes, shares);
  const DeviceModel sim = DeviceModel::SharedDevices(table);
  EXPECT_FALSE(SameSchedulingContent(nodes[0], nodes[1], sim));
  EXPECT_FALSE(SameSchedulingContent(nodes[0], RichNode("x"), sim));
  EXPECT_TRUE(SameSchedulingContent(RichNode("y"), RichNode("x"), sim));
}

TEST(ClusterSnapshot, nodes_differing_only_in_native_resources_share_a_gpu_class) {
  std::vector<NodeState> nodes;
  for (int i = 0; i < 6; ++i) {
    NodeState n = RichNode("n" + std::to_string(i));
    n.info.allocatable.Set("cpu", 64000);
    n.used.Set("cpu", 1000 + i);                   // every node its own content class
    n.used.Set("memory", int64_t{1} << (20 + i));  // and native amounts never split GPU classes
    if (i >= 4) n.used.Set("nvidia.com/gpu", Units(i - 1));  // n4, n5: GPU use of their own
    nodes.push_back(n);
  }
  auto snapshot = testing::SnapshotOf(nodes);
  ASSERT_EQ(snapshot->class_count(), 6u);
  EXPECT_EQ(snapshot->gpu_class_count(), 3u);
  auto gpu_class = [&](int i) {
    return snapshot->GpuClassOf(snapshot->classes()[snapshot->IndexOf("n" + std::to_string(i))]);
  };
  for (int i = 1; i < 4; ++i) EXPECT_EQ(gpu_class(i), gpu_class(0)) << i;
  EXPECT_NE(gpu_class(4), gpu_class(0));
  EXPECT_NE(gpu_class(5), gpu_class(0));
  EXPECT_NE(gpu_class(4), gpu_class(5));
  // A class the snapshot does not hold (the extender's node without the pod's own assumption) is
  // a GPU class of its own.
  EXPECT_EQ(snapshot->GpuClassOf(6), 3u);
}

TEST(ClusterSnapshot, classes_are_numbered_densely_and_names_resolve) {
  std::vector<NodeState> nodes;
  for (int i = 0; i < 30; ++i) {
    NodeState n = RichNode("n" + std::to_string(i));
    n.used.Set("nvidia.com/gpu", Units(i % 3));
    nodes.push_back(n);
  }
  auto snapshot = testing::SnapshotOf(nodes);
  EXPECT_EQ(snapshot->class_count(), 3u);
  for (int i = 0; i < 30; ++i) {
    std::string name = "n" + std::to_string(i);
    uint32_t at = snapshot->IndexOf(name);
    ASSERT_NE(at, NodeIndex::kAbsent);
    EXPECT_EQ(snapshot->nodes()[at]->info.name, name);
    EXPECT_EQ(snapshot->Find(name), snapshot->nodes()[at].get());
    EXPECT_LT(snapshot->classes()[at], 3u);
    EXPECT_EQ(snapshot->classes()[at],
              snapshot->classes()[snapshot->IndexOf("n" + std::to_string(i % 3))]);
  }
  EXPECT_EQ(snapshot->Find("n30"), nullptr);
}

}  // namespace
}  // namespace gpusched::cluster_snapshot_test
