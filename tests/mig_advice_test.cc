// Longer than 500 lines: the MIG advice of both strategies, its layouts file and its output,
// sharing one set of builders.
#include "gpusched/planning/mig_advice.h"
#include "gpusched/planning/mig_advice_format.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/planning/mig_layouts.h"
#include "gpusched/policy/policy_file.h"
#include "testing/test_support.h"

namespace gpusched::mig_advice_test {
namespace {

using testing::Units;

// An idle A100-80GB x8, MIG-capable, MIG disabled, as the GPU Operator labels it.
NodeState IdleA100(const std::string& name, std::string_view product = "NVIDIA-A100-SXM4-80GB") {
  return testing::LabeledNode(name, 8,
                              {{"nvidia.com/gpu.product", product},
                               {"nvidia.com/gpu.memory", "81920"},
                               {"nvidia.com/gpu.count", "8"},
                               {"nvidia.com/mig.capable", "true"},
                               {"nvidia.com/mig.strategy", "mixed"},
                               {"nvidia.com/mig.config", "all-disabled"},
                               {"nvidia.com/mig.config.state", "success"}});
}

// A V100 x8: no MIG.
NodeState V100(const std::string& name) {
  return testing::LabeledNode(name, 8, {{"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"}});
}

std::vector<PodInfo> Pending(const std::string& resource, int64_t units, int count) {
  std::vector<PodInfo> pods;
  for (int i = 0; i < count; ++i) {
    pods.push_back(testing::MakePod(resource + "-" + std::to_string(i),
                                    ResourceList{{resource, Units(units)}}));
  }
  return pods;
}

std::vector<PodInfo> Concat(std::vector<PodInfo> a, const std::vector<PodInfo>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

MigLayouts Bundled() {
  Validated<MigLayouts> r = LoadMigLayouts("");
  EXPECT_TRUE(r.ok()) << r.problems.lines()[0];
  return r.value;
}

MigAdvice Advise(const std::vector<NodeState>& nodes, const std::vector<PodInfo>& pods,
                 const MigLayouts& layouts,
                 const GpuResourceNames& gpu_names = GpuResourceNames()) {
  return AdviseMigLayouts(*testing::SnapshotOf(nodes), layouts, PendingMigDemand(pods), gpu_names);
}

std::vector<std::string> Nodes(const MigAdvice& a) {
  std::vector<std::string> out;
  for (const auto& n : a.advice) out.push_back(n.node + "=" + n.layout);
  return out;
}

TEST(MigAdvice, pending_1g10gb_pods_get_all_1g10gb_on_the_fewest_idle_a100s) {
  std::vector<NodeState> nodes = {IdleA100("a100-1"), IdleA100("a100-2"), IdleA100("a100-3"),
                                  IdleA100("a100-4")};
  // 10 slices: one node of 56 serves them all.
  MigAdvice a = Advise(nodes, Pending("nvidia.com/mig-1g.10gb", 1, 10), Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  EXPECT_EQ(a.advice[0].serves, (std::map<std::string, int64_t>{{"1g.10gb", 10}}));
  EXPECT_EQ(a.advice[0].offer.slices.at("1g.10gb"), 56);
  EXPECT_EQ(a.advice[0].Command().command,
            "kubectl label node a100-1 nvidia.com/mig.config=all-1g.10gb --overwrite");
  EXPECT_TRUE(a.still_waiting.empty());
  EXPECT_EQ(a.candidates, 4u);

  // 60 slices: two nodes (56 + 4), not more; the second also all-1g.10gb (all-balanced serves
  // the 4 as well, but leaves less room for the next 1g.10gb pods).
  a = Advise(nodes, Pending("nvidia.com/mig-1g.10gb", 1, 60), Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb", "a100-2=all-1g.10gb"}));
  EXPECT_EQ(a.advice[1].serves.at("1g.10gb"), 4);

  // Free slices elsewhere already serve part of the demand.
  NodeState mig = IdleA100("a100-0");
  mig.info.allocatable = ResourceList{{"nvidia.com/mig-1g.10gb", Units(56)}};
  mig.used = ResourceList{{"nvidia.com/mig-1g.10gb", Units(50)}};
  mig.gpu_pod_count = 50;
  nodes.push_back(mig);
  a = Advise(nodes, Pending("nvidia.com/mig-1g.10gb", 1, 60), Bundled());
  EXPECT_EQ(a.free_slices.at("1g.10gb"), 6);
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  EXPECT_EQ(a.advice[0].serves.at("1g.10gb"), 54);
  EXPECT_EQ(a.still_waiting, (std::map<std::string, int64_t>{}));
}

TEST(MigAdvice, whole_gpu_demand_keeps_enough_whole_gpu_nodes) {
  std::vector<NodeState> nodes = {IdleA100("a100-1"), IdleA100("a100-2")};
  std::vector<PodInfo> mig = Pending("nvidia.com/mig-1g.10gb", 1, 100);
  // One 8-GPU pod waits: one A100 stays whole, though 44 slices stay wanting.
  MigAdvice a = Advise(nodes, Concat(mig, Pending("nvidia.com/gpu", 8, 1)), Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  EXPECT_EQ(a.whole_gpu_pods_fit, 1);
  EXPECT_EQ(a.still_waiting.at("1g.10gb"), 44);
  // Two 4-GPU pods fit on one node: the same.
  a = Advise(nodes, Concat(mig, Pending("nvidia.com/gpu", 4, 2)), Bundled());
  EXPECT_EQ(a.advice.size(), 1u);
  EXPECT_EQ(a.whole_gpu_pods_fit, 2);
  // Three: both A100s are needed whole, nothing is repartitioned.
  a = Advise(nodes, Concat(mig, Pending("nvidia.com/gpu", 4, 3)), Bundled());
  EXPECT_TRUE(a.advice.empty());
  // When a V100 holds the 8-GPU pod, both A100s serve the MIG demand.
  nodes.push_back(V100("v100-1"));
  a = Advise(nodes, Concat(mig, Pending("nvidia.com/gpu", 8, 1)), Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb", "a100-2=all-1g.10gb"}));
  EXPECT_EQ(a.whole_gpu_pods_fit, 1);
}

// The snapshot's pending pods count only where the advice could take from them: an 8-GPU pod the
// policy holds to H100s (gpusched.io/gpu-product) waits for H100 GPUs, so repartitioning the idle
// A100 takes nothing from it. Counted blindly, it would "fit" on the A100's 8 free GPUs and
// block the advice.
TEST(MigAdvice, a_whole_gpu_pod_held_to_another_product_does_not_hold_an_idle_a100_back) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  ledger.UpsertNode(IdleA100("a100-1").info);
  ledger.UpsertNode(testing::LabeledNode("h100-1", 8,
                                         {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                                          {"nvidia.com/mig.capable", "true"},
                                          {"nvidia.com/mig.strategy", "single"}})
                        .info);
  PodInfo running = testing::MakePod("running", ResourceList{{"nvidia.com/gpu", Units(4)}});
  running.node_name = "h100-1";
  running.phase = PodPhase::kRunning;
  ledger.UpsertPod(running);
  PodInfo held = testing::MakePod("held-to-h100", ResourceList{{"nvidia.com/gpu", Units(8)}});
  held.annotations = {{"gpusched.io/gpu-product", "NVIDIA-H100-80GB-HBM3"}};
  ledger.UpsertPod(held);
  for (const PodInfo& p : Pending("nvidia.com/mig-1g.10gb", 1, 3)) ledger.UpsertPod(p);
  auto snapshot = ledger.BuildSnapshot();
  Policy policy(DefaultPolicySpec());

  MigDemand demand = PendingMigDemand(policy, *snapshot);
  EXPECT_TRUE(demand.whole_gpu_pods.empty());
  EXPECT_EQ(Nodes(AdviseMigLayouts(*snapshot, Bundled(), demand, policy.gpu_names())),
            (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  // Counted blindly, the held pod keeps the A100 whole.
  EXPECT_TRUE(AdviseMigLayouts(*snapshot, Bundled(), PendingMigDemand(snapshot->gpu_pods().pending),
                               policy.gpu_names())
                  .advice.empty());

  // Without the hold it could take the A100, and does count.
  held.annotations.clear();
  ledger.UpsertPod(held);
  EXPECT_EQ(PendingMigDemand(policy, *ledger.BuildSnapshot()).whole_gpu_pods,
            (std::vector<int64_t>{8}));
}

TEST(MigAdvice, a_node_in_use_cordoned_or_changing_is_not_advised) {
  NodeState busy = IdleA100("a100-busy");
  busy.used = ResourceList{{"nvidia.com/gpu", Units(1)}};
  busy.gpu_pod_count = 1;
  NodeState cordoned = IdleA100("a100-cordoned");
  cordoned.info.unschedulable = true;
  NodeState changing = IdleA100("a100-changing");
  changing.info.gpu.mig_config_state = MigConfigState::kPending;
  // Under the single strategy a node is a candidate, but its slices would be nvidia.com/gpu, which
  // pods asking for nvidia.com/mig-1g.10gb cannot use: not advised for them.
  NodeState single = IdleA100("a100-single");
  single.info.gpu.mig_strategy = MigStrategy::kSingle;
  MigAdvice a = Advise({busy, cordoned, changing, single, V100("v100-1")},
                       Pending("nvidia.com/mig-1g.10gb", 1, 10), Bundled());
  EXPECT_TRUE(a.advice.empty());
  EXPECT_EQ(a.candidates, 1u);
  EXPECT_EQ(a.single_candidates, 1u);
  // The text says why, and what to do.
  std::string text = FormatMigAdviceText(a);
  EXPECT_NE(text.find("candidates: 1 idle MIG-capable nodes (1 under the MIG single strategy)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("note: under the MIG single strategy (the GPU Operator's default) a node "
                      "offers its slices as nvidia.com/gpu of product <model>-MIG-<profile>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mig.strategy=mixed"), std::string::npos) << text;
  EXPECT_EQ(a.skipped, (std::map<std::string, size_t>{{"GPU model without known MIG profiles", 1},
                                                      {"GPU pods running", 1},
                                                      {"MIG change in progress or failed", 1},
                                                      {"cordoned", 1}}));
  EXPECT_EQ(a.still_waiting.at("1g.10gb"), 10);
  // Freed, the busy node is advised.
  busy.used = {};
  busy.gpu_pod_count = 0;
  a = Advise({busy}, Pending("nvidia.com/mig-1g.10gb", 1, 10), Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-busy=all-1g.10gb"}));
}

// The GPU Operator's default: MIG strategy single. An idle A100 with MIG disabled, as GFD labels it
// then (tests/fixtures/real-nodes/operator-v24-a100-80gb-x8.yaml: mig.strategy=single,
// mig.config=all-disabled, product NVIDIA-A100-SXM4-80GB), under another name.
NodeState SingleA100(const std::string& name) {
  NodeState n = testing::FixtureNode("../real-nodes/operator-v24-a100-80gb-x8.yaml");
  n.info.name = name;
  return n;
}

constexpr char kA100Slice[] = "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb";
constexpr char kA100Half[] = "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb";

// `count` pending pods asking for `units` nvidia.com/gpu with a nodeSelector on `product`, as the
// GPU Operator's MIG docs have pods pick a slice under the single strategy.
std::vector<PodInfo> PendingOn(const std::string& product, int64_t units, int count) {
  std::vector<PodInfo> pods;
  for (int i = 0; i < count; ++i) {
    std::string name = product + "-" + std::to_string(i);
    pods.push_back(testing::PodFromJson(
        R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + name +
        R"("},"spec":{"nodeSelector":{"nvidia.com/gpu.product":")" + product +
        R"("},"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":")" +
        std::to_string(units) + R"("}}}]}})"));
  }
  return pods;
}

TEST(MigAdvice, single_strategy_nodes_are_advised_for_pods_pinned_to_a_mig_product) {
  ASSERT_EQ(SingleA100("x").info.gpu.mig_strategy, MigStrategy::kSingle);
  std::vector<NodeState> nodes = {SingleA100("a100-1"), SingleA100("a100-2"), SingleA100("a100-3")};
  std::vector<PodInfo> pods = PendingOn(kA100Slice, 1, 10);
  MigDemand demand = PendingMigDemand(pods);
  EXPECT_EQ(demand.slices, (std::map<std::string, int64_t>{{kA100Slice, 10}}));
  EXPECT_TRUE(demand.whole_gpu_pods.empty());  // slices, not whole GPUs
  MigAdvice a = Advise(nodes, pods, Bundled());
  EXPECT_EQ(a.candidates, 3u);
  EXPECT_TRUE(a.skipped.empty());
  ASSERT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  EXPECT_TRUE(a.advice[0].single_strategy);
  EXPECT_EQ(a.advice[0].gpus, 8);
  EXPECT_EQ(a.advice[0].serves, (std::map<std::string, int64_t>{{kA100Slice, 10}}));
  // 56 nvidia.com/gpu, each a 1g.10gb slice, which GFD will label
  // NVIDIA-A100-SXM4-80GB-MIG-1g.10gb.
  EXPECT_EQ(a.advice[0].offer, (MigNodeOffer{0, {{kA100Slice, 56}}}));
  EXPECT_EQ(a.advice[0].Command().command,
            "kubectl label node a100-1 nvidia.com/mig.config=all-1g.10gb --overwrite");
  EXPECT_TRUE(a.still_waiting.empty());

  // Two products waited for: each node gets one profile on every GPU, never all-balanced (two
  // profiles on a node under single: the device plugin would not start).
  pods = Concat(PendingOn(kA100Slice, 1, 2), PendingOn(kA100Half, 1, 2));
  a = Advise(nodes, pods, Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb", "a100-2=all-3g.40gb"}));
  EXPECT_TRUE(a.still_waiting.empty());
  // The same pods under the mixed strategy would have one node all-balanced.
  EXPECT_EQ(Nodes(Advise({IdleA100("a100-1")},
                         Concat(Pending("nvidia.com/mig-1g.10gb", 1, 2),
                                Pending("nvidia.com/mig-3g.40gb", 1, 2)),
                         Bundled())),
            (std::vector<std::string>{"a100-1=all-balanced"}));
}

TEST(MigAdvice, a_single_strategy_node_already_cut_counts_its_slices_and_gpus) {
  // Eight H100s cut into 56 1g.10gb, as GFD labels them (gpu.count 56 counts slices).
  NodeState h100 = testing::FixtureNode("../real-nodes/mig-single-h100-x8-1g10gb.yaml");
  const std::string slice = "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb";
  const std::string half = "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb";
  // Its free slices serve pods pinned to its product: nothing to change.
  MigAdvice a = Advise({h100}, PendingOn(slice, 1, 10), Bundled());
  EXPECT_EQ(a.free_slices, (std::map<std::string, int64_t>{{slice, 56}}));
  EXPECT_TRUE(a.advice.empty());
  EXPECT_TRUE(a.still_waiting.empty());
  // Pods waiting for 3g.40gb: the node is re-cut, its 8 GPUs (not 56) giving 16 of them.
  a = Advise({h100}, PendingOn(half, 1, 3), Bundled());
  ASSERT_EQ(a.advice.size(), 1u);
  EXPECT_EQ(a.advice[0].layout, "all-3g.40gb");
  EXPECT_EQ(a.advice[0].gpus, 8);
  EXPECT_EQ(a.advice[0].current, (MigNodeOffer{0, {{slice, 56}}}));
  EXPECT_EQ(a.advice[0].offer, (MigNodeOffer{0, {{half, 16}}}));
  // In use, it is not advised.
  h100.used = ResourceList{{"nvidia.com/gpu", Units(1)}};
  h100.gpu_pod_count = 1;
  a = Advise({h100}, PendingOn(half, 1, 3), Bundled());
  EXPECT_TRUE(a.advice.empty());
  EXPECT_EQ(a.free_slices.at(slice), 55);
  EXPECT_EQ(a.skipped, (std::map<std::string, size_t>{{"GPU pods running", 1}}));
}

TEST(MigAdvice, a_cluster_of_both_strategies_gets_advice_for_each) {
  std::vector<NodeState> nodes = {IdleA100("mixed-1"), SingleA100("single-1")};
  std::vector<PodInfo> pods =
      Concat(Pending("nvidia.com/mig-1g.10gb", 1, 5), PendingOn(kA100Slice, 1, 4));
  MigAdvice a = Advise(nodes, pods, Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"mixed-1=all-1g.10gb", "single-1=all-1g.10gb"}));
  EXPECT_FALSE(a.advice[0].single_strategy);
  EXPECT_EQ(a.advice[0].serves, (std::map<std::string, int64_t>{{"1g.10gb", 5}}));
  EXPECT_TRUE(a.advice[1].single_strategy);
  EXPECT_EQ(a.advice[1].serves, (std::map<std::string, int64_t>{{kA100Slice, 4}}));
  EXPECT_TRUE(a.still_waiting.empty());

  a.inventory = "test";
  std::string text = FormatMigAdviceText(a);
  EXPECT_NE(text.find("# single-1 (A100-80GB, 8 GPUs, MIG single, now all-disabled: 8 whole GPUs): "
                      "serves 4x NVIDIA-A100-SXM4-80GB-MIG-1g.10gb; offers 56x "
                      "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb (as nvidia.com/gpu)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# mixed-1 (A100-80GB, 8 GPUs, MIG mixed, now all-disabled"),
            std::string::npos)
      << text;
  nlohmann::json j = nlohmann::json::parse(FormatMigAdviceJson(a));
  EXPECT_EQ(j["advice"][1]["strategy"], "single");
  EXPECT_EQ(j["advice"][1]["offers"], nlohmann::json({{"gpu", 56}}));
  EXPECT_EQ(j["advice"][0]["strategy"], "mixed");
  EXPECT_EQ(j["demand"]["slices"][kA100Slice], 4);
}

TEST(MigAdvice, a_pod_names_a_mig_product_by_selector_affinity_or_annotation) {
  auto demand = [](const std::string& spec, const std::string& annotations = "{}") {
    PodInfo pod = testing::PodFromJson(
        R"({"metadata":{"name":"p","namespace":"ml","uid":"p","annotations":)" + annotations +
        R"(},"spec":{)" + spec +
        R"("containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})");
    return PendingMigDemand(std::vector<PodInfo>{pod});
  };
  const std::string affinity =
      R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
      R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",)"
      R"("operator":"In","values":["NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"]}]}]}}},)";
  EXPECT_EQ(demand(affinity).slices, (std::map<std::string, int64_t>{{kA100Slice, 2}}));
  EXPECT_EQ(demand("", R"({"gpusched.io/gpu-product":"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"})").slices,
            (std::map<std::string, int64_t>{{kA100Slice, 2}}));
  // A glob, two products, or a product that is no MIG slice: whole GPUs.
  const std::string two = "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb,NVIDIA-A100-SXM4-80GB-MIG-2g.20gb";
  for (const std::string& products :
       {std::string("*-MIG-1g.10gb"), two, std::string("NVIDIA-A100-SXM4-80GB")}) {
    MigDemand d = demand("", R"({"gpusched.io/gpu-product":")" + products + R"("})");
    EXPECT_TRUE(d.slices.empty()) << products;
    EXPECT_EQ(d.whole_gpu_pods, (std::vector<int64_t>{2})) << products;
  }
}

// With a policy, an unpinned whole-GPU pod counts against the single-strategy nodes it could take
// (before, only mixed-strategy nodes were looked at, and it kept none whole), and a pod pinned to a
// MIG product is slice demand, not a whole-GPU pod.
TEST(MigAdvice, whole_gpu_pods_keep_single_strategy_nodes_whole_too) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  ledger.UpsertNode(SingleA100("a100-1").info);
  ledger.UpsertNode(SingleA100("a100-2").info);
  for (const PodInfo& p : PendingOn(kA100Slice, 1, 60)) ledger.UpsertPod(p);
  ledger.UpsertPod(testing::MakePod("train", ResourceList{{"nvidia.com/gpu", Units(8)}}));
  auto snapshot = ledger.BuildSnapshot();
  Policy policy(DefaultPolicySpec());
  MigDemand demand = PendingMigDemand(policy, *snapshot);
  EXPECT_EQ(demand.whole_gpu_pods, (std::vector<int64_t>{8}));
  EXPECT_EQ(demand.slices, (std::map<std::string, int64_t>{{kA100Slice, 60}}));
  MigAdvice a = AdviseMigLayouts(*snapshot, Bundled(), demand, policy.gpu_names());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  EXPECT_EQ(a.whole_gpu_pods_fit, 1);
  EXPECT_EQ(a.still_waiting.at(kA100Slice), 4);
}

TEST(MigAdvice, the_observed_mig_workload_settles_a_tie) {
  std::vector<PodInfo> pods = Pending("nvidia.com/mig-1g.10gb", 1, 2);
  // Nothing observed: the layout with the most room for 1g.10gb.
  MigAdvice a = Advise({IdleA100("a100-1")}, pods, Bundled());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  // Half the MIG pods seen lately asked for 3g.40gb: all-balanced serves the two as well and
  // matches that mix better.
  auto shape = [](std::string profile) {
    TaskShape t;
    t.mig_profile = std::move(profile);
    t.mig_count = 1;
    return t;
  };
  ObservedWorkload observed{{{shape("1g.10gb"), 0.5}, {shape("3g.40gb"), 0.5}}, 40};
  ClusterSnapshot snapshot({.nodes = {std::make_shared<const NodeState>(IdleA100("a100-1"))},
                            .generation = 1,
                            .observed_workload = observed});
  a = AdviseMigLayouts(snapshot, Bundled(), PendingMigDemand(pods), GpuResourceNames());
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=all-balanced"}));
  EXPECT_EQ(a.advice[0].serves.at("1g.10gb"), 2);
}

// A resource the policy lists in gpuResources is a GPU resource to the advice too: a node where a
// pod holds one is in use, not idle. Before, only nvidia.com/ resources counted.
TEST(MigAdvice, a_node_holding_a_policy_extra_gpu_resource_is_in_use) {
  NodeState held = IdleA100("a100-1");
  held.used = ResourceList{{"example.com/gpu", Units(1)}};
  const std::vector<PodInfo> pods = Pending("nvidia.com/mig-1g.10gb", 1, 2);
  EXPECT_EQ(Nodes(Advise({held}, pods, Bundled())),
            (std::vector<std::string>{"a100-1=all-1g.10gb"}));
  MigAdvice a = Advise({held}, pods, Bundled(), GpuResourceNames({"example.com/gpu"}));
  EXPECT_TRUE(a.advice.empty());
  EXPECT_EQ(a.skipped, (std::map<std::string, size_t>{{"GPU pods running", 1}}));
}

TEST(MigAdvice, no_advice_without_waiting_mig_pods) {
  MigAdvice a = Advise({IdleA100("a100-1")}, Pending("nvidia.com/gpu", 1, 3), Bundled());
  EXPECT_TRUE(a.advice.empty());
  EXPECT_NE(FormatMigAdviceText(a).find("# no change serves a waiting MIG pod"), std::string::npos);
}

constexpr char kCustomLayouts[] = R"(version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  half-1g.10gb:
    - devices: [0, 1, 2, 3]
      mig-enabled: true
      mig-devices:
        "1g.10gb": 7
    - devices: [4, 5, 6, 7]
      mig-enabled: false
)";

TEST(MigAdvice, an_operator_file_with_a_custom_layout_is_used) {
  Validated<MigLayouts> custom = ParseMigLayouts(kCustomLayouts, "custom.yaml");
  ASSERT_TRUE(custom.ok()) << custom.problems.lines()[0];
  EXPECT_EQ(custom.value.source, "custom.yaml");
  std::vector<PodInfo> pods =
      Concat(Pending("nvidia.com/mig-1g.10gb", 1, 10), Pending("nvidia.com/gpu", 4, 1));
  // The defaults have no layout keeping four whole GPUs: the 4-GPU pod keeps the node whole.
  EXPECT_TRUE(Advise({IdleA100("a100-1")}, pods, Bundled()).advice.empty());
  MigAdvice a = Advise({IdleA100("a100-1")}, pods, custom.value);
  EXPECT_EQ(Nodes(a), (std::vector<std::string>{"a100-1=half-1g.10gb"}));
  EXPECT_EQ(a.advice[0].offer, (MigNodeOffer{4, {{"1g.10gb", 28}}}));
  EXPECT_EQ(a.layouts_source, "custom.yaml");
}

TEST(MigAdvice, a_layout_is_offered_only_where_its_profiles_exist) {
  MigLayouts layouts = Bundled();
  const MigGpuModel* a100_40 = MigModelOf(IdleA100("x", "NVIDIA-A100-SXM4-40GB").info.gpu);
  const MigGpuModel* h100 = MigModelOf(IdleA100("x", "NVIDIA-H100-80GB-HBM3").info.gpu);
  ASSERT_NE(a100_40, nullptr);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(a100_40->name, "A100-40GB");
  EXPECT_EQ(h100->name, "H100-80GB");
  EXPECT_EQ(MigModelOf(V100("v").info.gpu), nullptr);
  // all-1g.10gb: four a GPU on the 40 GB part, seven on the 80 GB ones.
  EXPECT_EQ(OfferOf(layouts.layouts.at("all-1g.10gb"), *a100_40, 8),
            (MigNodeOffer{0, {{"1g.10gb", 32}}}));
  EXPECT_EQ(OfferOf(layouts.layouts.at("all-1g.10gb"), *h100, 8),
            (MigNodeOffer{0, {{"1g.10gb", 56}}}));
  EXPECT_FALSE(OfferOf(layouts.layouts.at("all-1g.20gb"), *a100_40, 8));
  EXPECT_FALSE(OfferOf(layouts.layouts.at("all-1g.5gb"), *h100, 8));
  EXPECT_EQ(OfferOf(layouts.layouts.at("all-balanced"), *h100, 2),
            (MigNodeOffer{0, {{"1g.10gb", 4}, {"2g.20gb", 2}, {"3g.40gb", 2}}}));
  EXPECT_EQ(OfferOf(layouts.layouts.at("all-disabled"), *h100, 8), (MigNodeOffer{8, {}}));
  // More than a GPU holds, a GPU no spec claims, or two specs claiming one: not offered.
  auto parse = [](const std::string& specs) {
    Validated<MigLayouts> r = ParseMigLayouts("version: v1\nmig-configs:\n  x:\n" + specs, "t");
    EXPECT_TRUE(r.ok()) << r.problems.lines()[0];
    return r.value.layouts.at("x");
  };
  EXPECT_FALSE(OfferOf(parse("  - {devices: all, mig-enabled: true, mig-devices: "
                             "{3g.40gb: 2, 1g.10gb: 1}}\n"),
                       *h100, 1));
  EXPECT_TRUE(OfferOf(parse("  - {devices: all, mig-enabled: true, mig-devices: "
                            "{3g.40gb: 1, 2g.20gb: 2}}\n"),
                      *h100, 1));
  EXPECT_FALSE(OfferOf(parse("  - {devices: [0], mig-enabled: false}\n"), *h100, 2));
  EXPECT_FALSE(OfferOf(parse("  - {devices: all, mig-enabled: false}\n"
                             "  - {devices: [1], mig-enabled: false}\n"),
                       *h100, 2));
  // Every bundled layout applies to some model gpusched knows (A100-40GB, A100-80GB, H100-80GB).
  for (const auto& [name, layout] : layouts.layouts) {
    bool applies = false;
    for (const char* product :
         {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}) {
      GpuLabels labels;
      labels.product = product;
      const MigGpuModel* model = MigModelOf(labels);
      ASSERT_NE(model, nullptr) << product;
      applies |= OfferOf(layout, *model, 8).has_value();
    }
    EXPECT_TRUE(applies) << name;
  }
}

TEST(MigAdvice, a_bad_file_names_file_line_and_key) {
  auto errors = [](std::string_view yaml) {
    return ParseMigLayouts(yaml, "bad.yaml").problems.lines();
  };
  EXPECT_EQ(errors("version: v1\nmig-configs:\n  custom:\n    - devices: all\n"
                   "      mig-enabled: true\n      mig-devices:\n        \"1g.10gb\": 9\n"),
            (std::vector<std::string>{
                "bad.yaml:7:20: mig-configs.custom[0].mig-devices.1g.10gb: must be within 0..7, "
                "got 9"}));
  std::vector<std::string> e = errors(
      "version: v2\nmig-configs:\n  bad name!:\n    - devices: all\n      mig-enabled: no\n"
      "  ok:\n    - devices: all\n      mig-enabled: false\n      colour: red\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], "bad.yaml:1:10: version: must be v1");
  EXPECT_NE(e[1].find("bad.yaml:3:3: mig-configs.bad name!: is not a valid label value"),
            std::string::npos)
      << e[1];
  EXPECT_NE(e[2].find("bad.yaml:9:7: mig-configs.ok[0].colour: unknown key"), std::string::npos)
      << e[2];
  EXPECT_NE(errors("version: v1\nmig-configs: [\n")[0].find("bad.yaml:"), std::string::npos);
  EXPECT_FALSE(errors("version: v1\nmig-configs:\n  x:\n    - devices: all\n"
                      "      mig-enabled: false\n      mig-devices: {1g.10gb: 1}\n")
                   .empty());
  EXPECT_FALSE(errors("version: v1\nmig-configs:\n  x:\n    - devices: all\n"
                      "      mig-enabled: true\n      mig-devices: {9g.1gb: 1}\n")
                   .empty());
  EXPECT_EQ(errors("")[0], "bad.yaml: empty MIG layouts file");
  Validated<MigLayouts> missing = LoadMigLayouts("/nonexistent/mig.yaml");
  ASSERT_EQ(missing.problems.lines().size(), 1u);
  EXPECT_NE(missing.problems.lines()[0].find("/nonexistent/mig.yaml"), std::string::npos);
}

TEST(MigAdvice, a_file_with_several_errors_gives_them_all) {
  Validated<MigLayouts> parsed = ParseMigLayouts(
      "version: v1\nmig-configs:\n"
      "  a:\n    - devices: [0, x]\n      mig-enabled: true\n"
      "  b:\n    - devices: all\n      mig-enabled: maybe\n      mig-devices: {1g.10gb: 99}\n",
      "several.yaml");
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(
      parsed.problems.lines(),
      (std::vector<std::string>{
          "several.yaml:4:20: mig-configs.a[0].devices[1]: must be a number",
          "several.yaml:4:7: mig-configs.a[0].mig-devices: is required when mig-enabled is true "
          "({} for none)",
          "several.yaml:8:20: mig-configs.b[0].mig-enabled: must be true or false",
          "several.yaml:9:30: mig-configs.b[0].mig-devices.1g.10gb: must be within 0..7, got 99"}));
}

TEST(MigAdvice, json_carries_the_advice_and_the_demand) {
  std::vector<PodInfo> pods = Pending("nvidia.com/mig-1g.10gb", 1, 3);
  PodInfo bound = testing::MakePod("bound", ResourceList{{"nvidia.com/mig-1g.10gb", Units(1)}});
  bound.node_name = "elsewhere";
  pods.push_back(bound);  // bound pods are no demand
  MigAdvice a = Advise({IdleA100("a100-1")}, pods, Bundled());
  a.inventory = "test";
  nlohmann::json j = nlohmann::json::parse(FormatMigAdviceJson(a));
  EXPECT_EQ(j["demand"]["slices"]["1g.10gb"], 3);
  EXPECT_EQ(j["advice"][0]["node"], "a100-1");
  EXPECT_EQ(j["advice"][0]["layout"], "all-1g.10gb");
  EXPECT_EQ(j["advice"][0]["serves"]["1g.10gb"], 3);
  EXPECT_EQ(j["advice"][0]["offers"]["mig-1g.10gb"], 56);
  EXPECT_EQ(j["advice"][0]["command"],
            "kubectl label node a100-1 nvidia.com/mig.config=all-1g.10gb --overwrite");
  EXPECT_EQ(j["stillWaiting"].size(), 0u);
  std::string text = FormatMigAdviceText(a);
  EXPECT_NE(text.find("kubectl label node a100-1 nvidia.com/mig.config=all-1g.10gb --overwrite\n"),
            std::string::npos)
      << text;
}

// Every line of `text` printable ASCII, and each that starts with "kubectl" a label command.
void ExpectOnlyLabelCommands(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (line.starts_with("kubectl")) {
      EXPECT_TRUE(line.starts_with("kubectl label node ")) << text;
    }
    for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c) << text;
    start = end + 1;
  }
}

TEST(MigAdvice, a_forged_label_in_a_cluster_file_cannot_add_a_command) {
  // As `--cluster FILE` reads it: a current layout carrying a newline, a command and an escape.
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-1
    labels:
      nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      nvidia.com/gpu.memory: "81920"
      nvidia.com/gpu.count: "8"
      nvidia.com/mig.capable: "true"
      nvidia.com/mig.strategy: mixed
      nvidia.com/mig.config: "x\nkubectl delete namespace prod #\e]0;owned\a"
  status:
    allocatable: {nvidia.com/gpu: "8"}
    capacity: {nvidia.com/gpu: "8"}
)",
                                "forged.yaml"),
                 ledger);
  auto snapshot = ledger.BuildSnapshot();
  MigAdvice a = AdviseMigLayouts(*snapshot, Bundled(),
                                 PendingMigDemand(Pending("nvidia.com/mig-1g.10gb", 1, 3)),
                                 GpuResourceNames());
  ASSERT_EQ(a.advice.size(), 1u);
  std::string text = FormatMigAdviceText(a);
  ExpectOnlyLabelCommands(text);
  EXPECT_NE(text.find("now x\\x0akubectl delete namespace prod #\\x1b]0;owned\\x07"),
            std::string::npos)
      << text;
}

TEST(MigAdvice, commands_are_built_from_valid_names_only) {
  // kubectl would read "--all" as a flag: every node relabelled.
  MigAdvice a = Advise({IdleA100("--all"), IdleA100("a.-b")},
                       Pending("nvidia.com/mig-1g.10gb", 1, 3), Bundled());
  EXPECT_TRUE(a.advice.empty());
  EXPECT_EQ(a.skipped["name not a DNS subdomain"], 2u);
  // A layout that is no label value gets no command, and the text says why.
  MigNodeAdvice bad{"a100-1", "A100-80GB", 8, "", "all-1g.10gb; rm -rf /", {}, {}, {}};
  KubectlLine line = bad.Command();
  EXPECT_TRUE(line.command.empty());
  EXPECT_NE(line.refused.find("not a valid label value"), std::string::npos) << line.refused;
  a.advice.push_back(bad);
  std::string text = FormatMigAdviceText(a);
  ExpectOnlyLabelCommands(text);
  EXPECT_NE(text.find("# no command: label value"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(FormatMigAdviceJson(a));
  EXPECT_TRUE(j["advice"][0]["command"].is_null());
  EXPECT_TRUE(j["advice"][0]["commandRefused"].is_string());
}

TEST(KubeNames, dns_subdomains_and_label_values) {
  for (const char* good : {"a", "gpu-node-1", "ip-10-0-72-45.us-east-1.compute.internal", "0a"}) {
    EXPECT_TRUE(IsDnsSubdomain(good)) << good;
  }
  for (const char* bad : {"", "-a", "a-", "--all", "a..b", ".a", "a.", "A", "a_b", "a b", "a\nb"}) {
    EXPECT_FALSE(IsDnsSubdomain(bad)) << bad;
  }
  EXPECT_FALSE(IsDnsSubdomain(std::string(254, 'a')));
  for (const char* good : {"all-1g.10gb", "A_b.c", "x"}) EXPECT_TRUE(IsLabelValue(good)) << good;
  for (const char* bad : {"", "-x", "x-", "a b", "a;b", "a\nb"}) {
    EXPECT_FALSE(IsLabelValue(bad)) << bad;
  }
  EXPECT_FALSE(IsLabelValue(std::string(64, 'a')));
}

}  // namespace
}  // namespace gpusched::mig_advice_test
