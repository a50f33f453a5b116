// The defragmentation plan's domain plans (gpusched/planning/defrag_domain.h): a waiting member of
// a sized pod group that no rack has room for gets the rack freed with the fewest moves, each moved
// pod sent outside it, the rest of the group covered by that plan; disruption budgets, placed
// members and the move bound steer or stop it; an unsized group keeps the single-node plan.
#include "gpusched/planning/defrag_domain.h"
#include "gpusched/plugins/gang_topology.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/pod_groups.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/topology.h"
#include "gpusched/planning/defrag_plan.h"
#include "gpusched/planning/defrag_plan_format.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::defrag_domain_test {
namespace {

using testing::Units;

constexpr char kRackKey[] = "network.topology.nvidia.com/leaf";

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

// Racks of four 8-GPU nodes, "<rack>-0" .. "<rack>-3", each node but the first `empty` with
// `pods_per_node` 1-GPU pods of the ReplicaSet "<rack>" (labelled app=<rack>): every rack
// fragmented, every pod with replicas on the rack's other nodes.
class DomainPlanTest : public ::testing::Test {
 protected:
  DomainPlanTest() : ledger_(GpuResourceNames{}) {}

  void AddRack(const std::string& rack, int pods_per_node, int empty = 0) {
    for (int i = 0; i < 4; ++i) {
      const std::string node = rack + "-" + std::to_string(i);
      NodeInfo n = testing::MakeNode(node, ResourceList{{"nvidia.com/gpu", Units(8)},
                                                        {"cpu", Units(96)},
                                                        {"memory", Units(1000)},
                                                        {"pods", Units(110)}})
                       .info;
      n.topology = PinLabels::Keep({{kRackKey, rack}}, IsTopologyLabel);
      ledger_.UpsertNode(n);
      for (int k = 0; i >= empty && k < pods_per_node; ++k) {
        PodInfo p = testing::MakePod(node + "-web-" + std::to_string(k),
                                     ResourceList{{"nvidia.com/gpu", Units(1)}, {"cpu", Units(1)}});
        p.node_name = node;
        p.phase = PodPhase::kRunning;
        p.labels = {{"app", rack}};
        p.controller = OwnerRef{"ReplicaSet", rack, "uid-rs-" + rack};
        Bind(std::move(p));
      }
    }
  }

  // Member `index` of the 8-GPU group "train" of `size` (0: unsized), waiting or bound on `node`.
  PodInfo Member(int index, int size, const std::string& node = "") {
    PodInfo p = testing::MakePod("w-" + std::to_string(index),
                                 ResourceList{{"nvidia.com/gpu", Units(8)}, {"cpu", Units(4)}});
    p.namespace_name = "ml";
    p.created_unix = 1000 + index;
    p.annotations = {{"gpusched.io/group", "train"}};
    if (size > 0) p.annotations.emplace_back("gpusched.io/group-size", std::to_string(size));
    p.group = ReadPodGroup(p.namespace_name, p.labels, p.annotations, p.spec_group);
    if (!node.empty()) {
      p.node_name = node;
      p.phase = PodPhase::kRunning;
      Bind(p);
    } else {
      ledger_.UpsertPod(p);
      waiting_.push_back(p);
    }
    return p;
  }

  DefragReport Plan(const std::vector<DisruptionBudget>& budgets = {},
                    const DefragOptions& options = {}) {
    snapshot_ = ledger_.BuildSnapshot();
    return PlanDefragmentation(DefaultPolicy(), *snapshot_, waiting_, bound_, budgets, options);
  }

  // Replays `plan`'s moves on copies of the snapshot's nodes: each moved pod leaves its node and
  // must find room for itself on its destination; then every member node must have room for the
  // members sent to it.
  void ExpectRoomAfterMoves(const PodDefragPlan& plan) {
    std::map<std::string, NodeState> nodes;
    for (const auto& n : snapshot_->nodes()) nodes[n->info.name] = *n;
    std::map<std::string, const PodInfo*> by_name;
    for (const PodInfo& p : bound_) by_name["default/" + p.name] = &p;
    for (const DefragMove& m : plan.moves) {
      const PodInfo& pod = *by_name.at(m.pod);
      ReleasePodFrom(nodes.at(m.from), pod);
      EXPECT_GE(RoomFor(nodes.at(m.to), pod.requests), 1) << m.pod << " on " << m.to;
      nodes.at(m.to).used.Add(pod.requests);
      ++nodes.at(m.to).pod_count;
    }
    std::map<std::string, int64_t> members;
    for (const std::string& node : plan.group->member_nodes) ++members[node];
    for (const auto& [node, count] : members) {
      EXPECT_GE(RoomFor(nodes.at(node), waiting_.front().requests), count) << node;
    }
  }

  static void ReleasePodFrom(NodeState& node, const PodInfo& pod) {
    for (const auto& r : pod.requests) node.used.Add(r.name, -r.milli);
    --node.pod_count;
  }

  void Bind(PodInfo p) {
    ledger_.UpsertPod(p);
    bound_.push_back(std::move(p));
  }

  ClusterLedger ledger_;
  std::vector<PodInfo> bound_;
  std::vector<PodInfo> waiting_;
  std::shared_ptr<const ClusterSnapshot> snapshot_;
};

bool AllStartWith(const std::vector<std::string>& names, const std::string& prefix) {
  for (const std::string& n : names) {
    if (!n.starts_with(prefix)) return false;
  }
  return !names.empty();
}

TEST_F(DomainPlanTest, FreesTheRackWithTheFewestMovesAndMovesEveryPodOutOfIt) {
  AddRack("a", 2);
  AddRack("b", 1);  // four moves free it
  AddRack("c", 3);
  Member(0, 4);
  Member(1, 4);
  DefragReport report = Plan();
  ASSERT_EQ(report.plans.size(), 2u);
  const PodDefragPlan& lead = report.plans[0];
  ASSERT_EQ(lead.outcome, DefragOutcome::kDomainPlan) << lead.why;
  ASSERT_TRUE(lead.group);
  EXPECT_EQ(lead.group->key, "ml/annotation/train");
  EXPECT_EQ(lead.group->size, 4);
  EXPECT_EQ(lead.group->to_place, 4);
  EXPECT_EQ(lead.group->level, "rack");
  EXPECT_EQ(lead.group->domain, "b");
  EXPECT_EQ(lead.moves.size(), 4u);
  EXPECT_EQ(lead.gpus_freed_milli, 4000);
  EXPECT_FALSE(lead.search_cut);
  std::vector<std::string> from, to;
  for (const DefragMove& m : lead.moves) {
    from.push_back(m.from);
    EXPECT_FALSE(m.to.starts_with("b-")) << m.pod << " to " << m.to;
  }
  EXPECT_TRUE(AllStartWith(from, "b-"));
  EXPECT_EQ(lead.group->member_nodes, (std::vector<std::string>{"b-0", "b-1", "b-2", "b-3"}));
  EXPECT_EQ(lead.node, "b-0");
  ExpectRoomAfterMoves(lead);

  // The second waiting member is covered by the first one's plan, and takes the next node.
  const PodDefragPlan& second = report.plans[1];
  EXPECT_EQ(second.outcome, DefragOutcome::kCovered);
  ASSERT_TRUE(second.group);
  EXPECT_EQ(second.group->covered_by, "ml/w-0");
  EXPECT_EQ(second.group->domain, "b");
  EXPECT_EQ(second.node, "b-1");
  EXPECT_TRUE(second.moves.empty());
}

TEST_F(DomainPlanTest, BudgetsThatBlockTheCheapestRackSendItToTheNext) {
  AddRack("a", 2);
  AddRack("b", 1);
  AddRack("c", 3);
  Member(0, 4);
  // b's budget allows three disruptions, one short of freeing b.
  DefragReport report = Plan({testing::BudgetSelecting("b", 3)});
  const PodDefragPlan& lead = report.plans.at(0);
  ASSERT_EQ(lead.outcome, DefragOutcome::kDomainPlan) << lead.why;
  EXPECT_EQ(lead.group->domain, "a");
  EXPECT_EQ(lead.moves.size(), 8u);
  for (const DefragMove& m : lead.moves) {
    EXPECT_TRUE(m.from.starts_with("a-")) << m.from;
    EXPECT_FALSE(m.to.starts_with("a-")) << m.to;
  }
  ExpectRoomAfterMoves(lead);
  // With none allowed anywhere, no rack is freed, and the reason says so.
  DefragReport none = Plan({testing::BudgetSelecting("a", 0), testing::BudgetSelecting("b", 0),
                            testing::BudgetSelecting("c", 0)});
  EXPECT_EQ(none.plans.at(0).outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(none.plans[0].why.find("its disruption budget allows no disruption"), std::string::npos)
      << none.plans[0].why;
}

TEST_F(DomainPlanTest, PlacedMembersKeepThePlanInTheirRack) {
  AddRack("a", 2);
  AddRack("b", 1);
  AddRack("c", 3, 1);
  // c-0 holds one placed member: the other three must join it in c, not in the cheaper b.
  Member(0, 4, "c-0");
  Member(1, 4);
  DefragReport report = Plan();
  const PodDefragPlan& lead = report.plans.at(0);
  ASSERT_EQ(lead.outcome, DefragOutcome::kDomainPlan) << lead.why;
  EXPECT_EQ(lead.group->domain, "c");
  EXPECT_EQ(lead.group->to_place, 3);
  EXPECT_EQ(lead.moves.size(), 9u);
  EXPECT_EQ(lead.group->member_nodes, (std::vector<std::string>{"c-1", "c-2", "c-3"}));
}

TEST_F(DomainPlanTest, BoundedMovesGiveNoPlanNamingTheGroupAndTheShortfall) {
  AddRack("a", 2);
  AddRack("b", 1);
  Member(0, 4);
  Member(1, 4);
  DefragOptions options;
  options.max_domain_moves = 3;
  DefragReport report = Plan({}, options);
  const PodDefragPlan& lead = report.plans.at(0);
  EXPECT_EQ(lead.outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(lead.why.find("pod group ml/annotation/train of 4 (4 to place)"), std::string::npos)
      << lead.why;
  EXPECT_NE(lead.why.find("closest rack 'b', 1 member short"), std::string::npos) << lead.why;
  EXPECT_NE(lead.why.find("needs more than 3 moves (2)"), std::string::npos) << lead.why;
  EXPECT_EQ(report.plans.at(1).outcome, DefragOutcome::kNoPlan);
  EXPECT_EQ(report.plans[1].why, "as for ml/w-0, of the same pod group");
  // The domain bound cuts the search and says so.
  options = {};
  options.max_domains = 1;  // rack a alone (most room first: a tie, in node order)
  EXPECT_TRUE(Plan({}, options).plans.at(0).search_cut);
}

TEST_F(DomainPlanTest, AnUnsizedGroupKeepsTheSingleNodePlan) {
  AddRack("a", 2);
  AddRack("b", 1);
  Member(0, 0);
  Member(1, 0);
  DefragReport report = Plan();
  const PodDefragPlan& first = report.plans.at(0);
  EXPECT_EQ(first.outcome, DefragOutcome::kPlan) << first.why;
  EXPECT_FALSE(first.group);
  EXPECT_EQ(first.moves.size(), 1u);
  EXPECT_TRUE(first.node.starts_with("b-")) << first.node;
  // Its sibling plans on its own too.
  EXPECT_EQ(report.plans.at(1).outcome, DefragOutcome::kPlan);
}

TEST_F(DomainPlanTest, TextAndJsonNameTheDomain) {
  AddRack("a", 2);
  AddRack("b", 1);
  Member(0, 4);
  Member(1, 4);
  DefragReport report = Plan();
  const std::string text = FormatDefragPlanText(report);
  EXPECT_NE(text.find("ml/w-0 (nvidia.com/gpu: 8, priority 0, profile default): pod group "
                      "ml/annotation/train of 4: 4 moves free 4 GPUs in rack 'b'\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  then its 4 members to place fit in rack 'b': b-0, b-1, b-2, b-3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ml/w-1 (nvidia.com/gpu: 8, priority 0, profile default): covered by the "
                      "domain plan of ml/w-0 for its pod group: goes to b-1 in rack 'b'\n"),
            std::string::npos)
      << text;
  const auto json = nlohmann::json::parse(FormatDefragPlanJson(report));
  const auto& lead = json["plans"][0];
  EXPECT_EQ(lead["outcome"], "domain-plan");
  EXPECT_EQ(lead["domain"], nlohmann::json({{"level", "rack"}, {"name", "b"}}));
  EXPECT_EQ(lead["group"],
            nlohmann::json({{"key", "ml/annotation/train"}, {"size", 4}, {"toPlace", 4}}));
  EXPECT_EQ(lead["memberNodes"].size(), 4u);
  EXPECT_EQ(lead["moves"].size(), 4u);
  EXPECT_EQ(lead["gpusFreed"], 4);
  EXPECT_EQ(lead["node"], "b-0");
  EXPECT_EQ(json["plans"][1]["outcome"], "covered");
  EXPECT_EQ(json["plans"][1]["coveredBy"], "ml/w-0");
}

// The docs' example: tests/fixtures/defrag/racks.yaml as `gpusched defrag-plan --cluster` reads it.
TEST(DomainPlanCli, TheRacksFixtureFreesRackC) {
  const std::string path = std::string(GPUSCHED_TEST_FIXTURES) + "/defrag/racks.yaml";
  Inventory inventory = LoadInventoryFile(path);
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(inventory, ledger);
  auto snapshot = ledger.BuildSnapshot();
  DefragReport report =
      PlanDefragmentation(DefaultPolicy(), *snapshot, snapshot->gpu_pods().pending,
                          snapshot->gpu_pods().bound, inventory.budgets);
  ASSERT_EQ(report.plans.size(), 4u);
  const PodDefragPlan& lead = report.plans[0];
  ASSERT_EQ(lead.outcome, DefragOutcome::kDomainPlan) << lead.why;
  // rack-b needs 3 moves, but embed's budget allows 2: rack-c's 6 moves it is.
  EXPECT_EQ(lead.group->domain, "rack-c");
  EXPECT_EQ(lead.moves.size(), 6u);
  for (const DefragMove& m : lead.moves) EXPECT_FALSE(m.to.starts_with("c-")) << m.to;
  for (size_t k = 1; k < 4; ++k) {
    EXPECT_EQ(report.plans[k].outcome, DefragOutcome::kCovered);
    EXPECT_EQ(report.plans[k].node, "c-" + std::to_string(k));
  }
}

TEST(DomainPlanLevels, ThePolicysGangTopologyLevelsElseTheDefaults) {
  const Engine& engine = *DefaultPolicy().Select(PodInfo{}).engine;
  EXPECT_EQ(GangTopologyLevels(engine), DefaultTopologyLevels());
  auto compiled = CompilePolicy(
      "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n"
      "topology:\n  levels:\n  - {name: row, keys: [example.com/rack-row]}\n",
      "test.yaml");
  ASSERT_TRUE(compiled.ok());
  const auto& levels = GangTopologyLevels(*compiled.value->Select(PodInfo{}).engine);
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_EQ(levels[0].name, "row");
}

}  // namespace
}  // namespace gpusched::defrag_domain_test
