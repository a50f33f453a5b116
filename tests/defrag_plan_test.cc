// The defragmentation plan (gpusched/planning/defrag_plan.h): the fewest moves, the rules on which
// pods may move (priority, controller, replica elsewhere, disruption budgets), destinations the
// engine accepts, plans that build on each other; and the PodDisruptionBudget decoder, selector
// matching and the one-shot listing behind it.
#include "gpusched/planning/defrag_plan.h"
#include "gpusched/planning/defrag_plan_format.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gpusched/app/defrag_plan_command.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/budget_list.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::defrag_plan_test {
namespace {

using testing::Units;

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

// A bound pod of `gpus` whole GPUs on `node`, controlled by the ReplicaSet `controller` (none
// when empty), labelled app=<label>.
PodInfo Bound(const std::string& name, const std::string& node, int64_t gpus,
              const std::string& controller, const std::string& label = "web",
              int32_t priority = 0) {
  PodInfo p = testing::MakePod(name, ResourceList{{"nvidia.com/gpu", Units(gpus)}});
  p.node_name = node;
  p.phase = PodPhase::kRunning;
  p.priority = priority;
  p.labels = {{"app", label}};
  if (!controller.empty()) p.controller = OwnerRef{"ReplicaSet", controller, "uid-" + controller};
  return p;
}

PodInfo Waiting(const std::string& name, int64_t gpus, int32_t priority = 0) {
  PodInfo p = testing::MakePod(name, ResourceList{{"nvidia.com/gpu", Units(gpus)}});
  p.priority = priority;
  return p;
}

// A cluster of 8-GPU nodes with `pods` bound on them, each node's usage the sum of its pods'.
struct Cluster {
  std::vector<PodInfo> pods;
  std::shared_ptr<const ClusterSnapshot> snapshot;
};
Cluster ClusterOf(const std::vector<std::string>& nodes, std::vector<PodInfo> pods) {
  std::vector<NodeState> states;
  for (const auto& name : nodes) {
    NodeState n = testing::MakeNode(name, ResourceList{{"nvidia.com/gpu", Units(8)}});
    for (const auto& p : pods) {
      if (p.node_name == name) ChargePod(n, ChargeOf(p, GpuResourceNames()));
    }
    states.push_back(std::move(n));
  }
  return Cluster{std::move(pods), testing::SnapshotOf(states)};
}

DefragReport PlanFor(const Cluster& c, const std::vector<PodInfo>& waiting,
                     const std::vector<DisruptionBudget>& budgets = {},
                     const DefragOptions& options = {}) {
  return PlanDefragmentation(DefaultPolicy(), *c.snapshot, waiting, c.pods, budgets, options);
}

std::vector<std::string> MovedPods(const PodDefragPlan& plan) {
  std::vector<std::string> names;
  for (const auto& m : plan.moves) names.push_back(m.pod);
  return names;
}

// node-a holds two 1-GPU pods and node-b one, all of the ReplicaSet web; node-c runs a 4-GPU Job
// pod. An 8-GPU pod fits nowhere; moving web-b (one pod) frees node-b.
Cluster KnownMinimal(int32_t b_priority = 0) {
  PodInfo job = Bound("train", "node-c", 4, "");
  job.controller = OwnerRef{"Job", "train", "uid-train"};
  return ClusterOf({"node-a", "node-b", "node-c"},
                   {Bound("web-a1", "node-a", 1, "web"), Bound("web-a2", "node-a", 1, "web"),
                    Bound("web-b", "node-b", 1, "web", "web", b_priority), job});
}

// Replays `report`'s plans on copies of the snapshot's nodes with the engine alone: every moved
// pod must pass the filter on its destination after the moves before it, and every planned pod
// on its node once its moves are done; a pod that fits now must pass where the plan says.
void ExpectEngineAccepts(const Cluster& c, const DefragReport& report,
                         const std::vector<PodInfo>& waiting) {
  std::map<std::string, NodeState> nodes;
  for (const auto& n : c.snapshot->nodes()) nodes[n->info.name] = *n;
  std::map<std::string, const PodInfo*> by_name;
  for (const auto& p : c.pods) by_name[p.namespace_name + "/" + p.name] = &p;
  for (const auto& p : waiting) by_name[p.namespace_name + "/" + p.name] = &p;
  auto passes = [&](const PodInfo& pod, const NodeState& node) {
    Policy::Judgement judged = DefaultPolicy().Judge(pod, *c.snapshot);
    const NodeState* one[] = {&node};
    return judged.engine()
        .Filter(*judged.cycle, std::span<const NodeState* const>(one))[0]
        .passed();
  };
  for (const PodDefragPlan& plan : report.plans) {
    if (plan.outcome == DefragOutcome::kNoPlan) continue;
    for (const DefragMove& m : plan.moves) {
      const PodInfo& pod = *by_name.at(m.pod);
      EXPECT_NE(m.to, m.from) << m.pod;
      UnchargePod(nodes.at(m.from), ChargeOf(pod, GpuResourceNames()));
      EXPECT_TRUE(passes(pod, nodes.at(m.to))) << m.pod << " on " << m.to;
      ChargePod(nodes.at(m.to), ChargeOf(pod, GpuResourceNames()));
    }
    const PodInfo& pod = *by_name.at(plan.pod);
    EXPECT_TRUE(passes(pod, nodes.at(plan.node))) << plan.pod << " on " << plan.node;
    ChargePod(nodes.at(plan.node), ChargeOf(pod, GpuResourceNames()));
  }
}

TEST(DefragPlan, finds_the_known_minimal_set) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {Waiting("big", 8)};
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans.size(), 1u);
  const PodDefragPlan& p = r.plans[0];
  ASSERT_EQ(p.outcome, DefragOutcome::kPlan) << p.why;
  EXPECT_EQ(p.node, "node-b");
  EXPECT_EQ(MovedPods(p), std::vector<std::string>{"default/web-b"});
  EXPECT_EQ(p.moves[0].from, "node-b");
  EXPECT_NE(p.moves[0].to, "node-b");
  EXPECT_EQ(p.gpus_freed_milli, 1000);
  EXPECT_FALSE(p.search_cut);
  ExpectEngineAccepts(c, r, waiting);
}

// A pod asking only for a resource the policy lists in gpuResources waits for a GPU: it is
// planned under that policy, and not under one that does not list it.
TEST(DefragPlan, a_pod_asking_for_a_policy_extra_gpu_resource_is_planned) {
  NodeState node = testing::MakeNode("node-a", ResourceList{{"example.com/gpu", Units(8)}});
  Cluster c{{}, testing::SnapshotOf({node})};
  std::vector<PodInfo> waiting = {
      testing::MakePod("vgpu", ResourceList{{"example.com/gpu", Units(1)}})};
  EXPECT_TRUE(PlanFor(c, waiting).plans.empty());
  PolicySpec spec = DefaultPolicySpec();
  spec.gpu_resources = {"example.com/gpu"};
  const Policy extra(std::move(spec));
  DefragReport r = PlanDefragmentation(extra, *c.snapshot, waiting, c.pods, {}, {});
  ASSERT_EQ(r.plans.size(), 1u);
  EXPECT_EQ(r.plans[0].pod, "default/vgpu");
}

TEST(DefragPlan, a_pod_that_fits_now_needs_no_move) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {Waiting("small", 2)};
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans.size(), 1u);
  EXPECT_EQ(r.plans[0].outcome, DefragOutcome::kFitsNow);
  EXPECT_TRUE(r.plans[0].moves.empty());
  ExpectEngineAccepts(c, r, waiting);
}

TEST(DefragPlan, never_moves_a_pod_of_higher_priority) {
  // web-b outranks the waiting pod: the plan takes node-a's two pods instead.
  Cluster c = KnownMinimal(/*b_priority=*/100);
  std::vector<PodInfo> waiting = {Waiting("big", 8, /*priority=*/10)};
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans[0].outcome, DefragOutcome::kPlan) << r.plans[0].why;
  EXPECT_EQ(r.plans[0].node, "node-a");
  EXPECT_EQ(MovedPods(r.plans[0]), (std::vector<std::string>{"default/web-a1", "default/web-a2"}));
  ExpectEngineAccepts(c, r, waiting);
  // With node-a's pods above it too, nothing may move.
  for (auto& p : c.pods) p.priority = 100;
  DefragReport none = PlanFor(c, waiting);
  EXPECT_EQ(none.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(none.plans[0].why.find("of higher priority"), std::string::npos) << none.plans[0].why;
  // Equal priority may move.
  for (auto& p : c.pods) p.priority = 10;
  EXPECT_EQ(PlanFor(c, waiting).plans[0].outcome, DefragOutcome::kPlan);
}

TEST(DefragPlan, never_moves_a_pod_without_a_controller_or_a_replica_elsewhere) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {Waiting("big", 8)};
  // web-b without a controller (and web-c, on node-c with the Job, the replica elsewhere of
  // node-a's pods): node-a's two pods move instead.
  c.pods[2].controller = OwnerRef{};
  c.pods.push_back(Bound("web-c", "node-c", 1, "web"));
  c = ClusterOf({"node-a", "node-b", "node-c"}, c.pods);
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans[0].outcome, DefragOutcome::kPlan) << r.plans[0].why;
  EXPECT_EQ(r.plans[0].node, "node-a");
  for (const auto& m : r.plans[0].moves) EXPECT_NE(m.pod, "default/web-b");
  // node-a's pods alone in their ReplicaSet (no replica on another node), web-b bare: no plan.
  c.pods[0].controller = c.pods[1].controller = OwnerRef{"ReplicaSet", "solo", "uid-solo"};
  DefragReport none = PlanFor(c, waiting);
  ASSERT_EQ(none.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(none.plans[0].why.find("no controller"), std::string::npos) << none.plans[0].why;
  EXPECT_NE(none.plans[0].why.find("no replica on another node"), std::string::npos);
  // A Job's pod never moves, though its Job has another pod elsewhere.
  c.pods[0].controller = c.pods[1].controller = OwnerRef{"Job", "j", "uid-j"};
  c.pods[3].controller = OwnerRef{"Job", "j", "uid-j"};
  EXPECT_EQ(PlanFor(c, waiting).plans[0].outcome, DefragOutcome::kNoPlan);
}

TEST(DefragPlan, a_budget_that_allows_no_disruption_blocks) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {Waiting("big", 8)};
  DefragReport blocked = PlanFor(c, waiting, {testing::BudgetSelecting("web", 0)});
  ASSERT_EQ(blocked.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(blocked.plans[0].why.find("disruption budget"), std::string::npos)
      << blocked.plans[0].why;
  // Without status a budget allows none either.
  EXPECT_EQ(PlanFor(c, waiting, {testing::BudgetSelecting("web", 5, false)}).plans[0].outcome,
            DefragOutcome::kNoPlan);
  // One disruption allowed: the one-move plan.
  DefragReport one = PlanFor(c, waiting, {testing::BudgetSelecting("web", 1)});
  ASSERT_EQ(one.plans[0].outcome, DefragOutcome::kPlan);
  EXPECT_EQ(one.plans[0].moves.size(), 1u);
  // A budget of another namespace or label does not count.
  DisruptionBudget other = testing::BudgetSelecting("web", 0);
  other.namespace_name = "elsewhere";
  EXPECT_EQ(PlanFor(c, waiting, {other, testing::BudgetSelecting("api", 0)}).plans[0].outcome,
            DefragOutcome::kPlan);
  // Under two budgets a pod does not move (the eviction API refuses it).
  EXPECT_EQ(
      PlanFor(c, waiting, {testing::BudgetSelecting("web", 5), testing::BudgetSelecting("web", 5)})
          .plans[0]
          .outcome,
      DefragOutcome::kNoPlan);
}

TEST(DefragPlan, a_budget_counts_every_move_of_every_plan) {
  // web-b may not move (priority): freeing node-a takes two web moves, more than one allowed.
  Cluster c = KnownMinimal(/*b_priority=*/100);
  std::vector<PodInfo> waiting = {Waiting("big", 8)};
  DefragReport r = PlanFor(c, waiting, {testing::BudgetSelecting("web", 1)});
  ASSERT_EQ(r.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(r.plans[0].why.find("refuse"), std::string::npos) << r.plans[0].why;
  EXPECT_EQ(PlanFor(c, waiting, {testing::BudgetSelecting("web", 2)}).plans[0].outcome,
            DefragOutcome::kPlan);
  // Two waiting pods with one disruption allowed: the first plan spends it.
  Cluster both = KnownMinimal();
  both.pods.push_back(Bound("web-d", "node-d", 1, "web"));
  both = ClusterOf({"node-a", "node-b", "node-c", "node-d"}, both.pods);
  std::vector<PodInfo> two = {Waiting("big-1", 8), Waiting("big-2", 8)};
  DefragReport spent = PlanFor(both, two, {testing::BudgetSelecting("web", 1)});
  ASSERT_EQ(spent.plans.size(), 2u);
  EXPECT_EQ(spent.plans[0].outcome, DefragOutcome::kPlan);
  EXPECT_EQ(spent.plans[1].outcome, DefragOutcome::kNoPlan) << spent.plans[1].why;
  DefragReport enough = PlanFor(both, two, {testing::BudgetSelecting("web", 3)});
  ASSERT_EQ(enough.plans[1].outcome, DefragOutcome::kPlan) << enough.plans[1].why;
  EXPECT_NE(enough.plans[0].node, enough.plans[1].node);
  ExpectEngineAccepts(both, enough, two);
}

TEST(DefragPlan, plans_the_highest_priority_first_and_builds_on_earlier_plans) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {Waiting("low", 8, 1), Waiting("high", 8, 5)};
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans.size(), 2u);
  EXPECT_EQ(r.plans[0].pod, "default/high");
  EXPECT_EQ(r.plans[0].node, "node-b");
  // The second pod cannot have node-b; web pods moved by the first plan count where they went.
  EXPECT_NE(r.plans[1].node, "node-b");
  ExpectEngineAccepts(c, r, waiting);
}

TEST(DefragPlan, an_unresolvable_pod_gets_no_plan_with_the_reason) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {
      testing::MakePod("mig", ResourceList{{"nvidia.com/mig-1g.5gb", Units(1)}})};
  DefragReport r = PlanFor(c, waiting);
  ASSERT_EQ(r.plans.size(), 1u);
  EXPECT_EQ(r.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_NE(r.plans[0].why.find("even with every pod gone"), std::string::npos) << r.plans[0].why;
  // A pod that asks for no GPU, or is bound, is no waiting GPU pod.
  PodInfo cpu = testing::MakePod("cpu", ResourceList{{"cpu", Units(1)}});
  EXPECT_EQ(PlanFor(c, {cpu, c.pods[0]}).waiting, 0u);
}

TEST(DefragPlan, the_search_stops_at_its_bounds_and_says_so) {
  // Eight 1-GPU web pods on each of three full nodes: freeing one takes all eight.
  std::vector<PodInfo> pods;
  for (const char* node : {"n1", "n2", "n3"}) {
    for (int i = 0; i < 8; ++i) {
      pods.push_back(Bound(std::string(node) + "-" + std::to_string(i), node, 1, "web"));
    }
  }
  Cluster c = ClusterOf({"n1", "n2", "n3", "spare"}, pods);
  std::vector<PodInfo> waiting = {Waiting("big", 8), Waiting("other", 8)};
  // "spare" takes the first pod at once; the second needs eight moves, with room for none but
  // spare's... which the first took: no destination.
  DefragReport r = PlanFor(c, waiting);
  EXPECT_EQ(r.plans[0].outcome, DefragOutcome::kFitsNow);
  EXPECT_EQ(r.plans[1].outcome, DefragOutcome::kNoPlan);
  // Few subset checks allowed: cut, and said.
  DefragOptions tight;
  tight.max_subset_checks = 3;
  DefragReport cut = PlanFor(c, {Waiting("other", 8)}, {}, tight);
  EXPECT_EQ(cut.plans[0].outcome, DefragOutcome::kFitsNow);
  Cluster full = ClusterOf({"n1", "n2", "n3"}, pods);
  DefragReport none = PlanFor(full, {Waiting("other", 8)}, {}, tight);
  EXPECT_EQ(none.plans[0].outcome, DefragOutcome::kNoPlan);
  EXPECT_TRUE(none.plans[0].search_cut);
  // At most max_waiting pods are planned; all are counted.
  DefragOptions one;
  one.max_waiting = 1;
  DefragReport first = PlanFor(c, waiting, {}, one);
  EXPECT_EQ(first.waiting, 2u);
  EXPECT_EQ(first.plans.size(), 1u);
}

TEST(DefragPlan, text_and_json) {
  Cluster c = KnownMinimal();
  std::vector<PodInfo> waiting = {
      Waiting("big", 8), Waiting("small", 1),
      testing::MakePod("mig", ResourceList{{"nvidia.com/mig-1g.5gb", Units(1)}})};
  DefragReport r = PlanFor(c, waiting);
  r.inventory = "test";
  std::string text = FormatDefragPlanText(r);
  EXPECT_NE(text.find("move default/web-b (1 GPU) from node-b to "), std::string::npos) << text;
  EXPECT_NE(text.find("fits now on"), std::string::npos) << text;
  EXPECT_NE(text.find("no plan: "), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(FormatDefragPlanJson(r));
  EXPECT_EQ(j["inventory"], "test");
  EXPECT_EQ(j["waiting"], 3);
  ASSERT_EQ(j["plans"].size(), 3u);
  const auto& big = j["plans"][0];
  EXPECT_EQ(big["pod"], "default/big");
  EXPECT_EQ(big["outcome"], "plan");
  EXPECT_EQ(big["node"], "node-b");
  EXPECT_EQ(big["requests"]["nvidia.com/gpu"], 8);
  ASSERT_EQ(big["moves"].size(), 1u);
  EXPECT_EQ(big["moves"][0]["pod"], "default/web-b");
  EXPECT_EQ(big["moves"][0]["from"], "node-b");
  EXPECT_EQ(big["moves"][0]["gpus"], 1);
  EXPECT_EQ(big["gpusFreed"], 1);
  // Equal priority and age: by name.
  EXPECT_EQ(j["plans"][1]["pod"], "default/mig");
  EXPECT_EQ(j["plans"][1]["outcome"], "no-plan");
  EXPECT_NE(j["plans"][1]["why"], "");
  EXPECT_EQ(j["plans"][2]["outcome"], "fits-now");
}

// Issue #37: a resource name from a --cluster file reaches the text as its pod wrote it; quoted
// (FormatResourceList, the reason's profile), it cannot start a line of its own.
TEST(DefragPlan, a_forged_resource_name_is_quoted_in_the_text) {
  Cluster c = KnownMinimal();
  const std::string forged = "nvidia.com/mig-1g.5gb\nkubectl delete namespace prod #";
  std::vector<PodInfo> waiting = {testing::MakePod("forged", ResourceList{{forged, Units(1)}})};
  DefragReport r = PlanFor(c, waiting);
  std::string text = FormatDefragPlanText(r);
  ASSERT_NE(text.find("forged"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nkubectl"), std::string::npos) << text;
}

// --- PodDisruptionBudgets: decoding, selectors, listing ---

// The budget `json` decodes to, through the inventory reader (which decodes it with
// DecodeDisruptionBudget). Test bodies must not hold a simdjson parser of their own: they compile
// at -O0, where simdjson's development checks change the parser's layout, and the linker may then
// give the library's thread-local parsers this file's inline destructor.
DisruptionBudget DecodeBudget(std::string json) {
  json.insert(1, R"("kind":"PodDisruptionBudget",)");
  Inventory inventory = ParseInventory(json, "budget");
  EXPECT_EQ(inventory.budgets.size(), 1u);
  return inventory.budgets.at(0);
}

PodInfo Labelled(StringPairs labels, std::string ns = "ml") {
  PodInfo p;
  p.namespace_name = std::move(ns);
  p.labels = std::move(labels);
  return p;
}

TEST(DisruptionBudgetDecode, reads_the_selector_and_status) {
  DisruptionBudget b = DecodeBudget(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
    "metadata":{"name":"web","namespace":"ml","uid":"x"},
    "spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[
      {"key":"tier","operator":"In","values":["a","b"]},
      {"key":"canary","operator":"DoesNotExist"},
      {"key":"zone","operator":"NotIn","values":["z9"]},
      {"key":"team","operator":"Exists"}]}},
    "status":{"currentHealthy":3,"desiredHealthy":2,"disruptionsAllowed":1,"expectedPods":3}})");
  EXPECT_EQ(b.key(), "ml/web");
  EXPECT_TRUE(b.has_status);
  EXPECT_EQ(b.disruptions_allowed, 1);
  ASSERT_EQ(b.selector.requirements.size(), 5u);
  EXPECT_FALSE(b.selector.unreadable);
  StringPairs match = {{"app", "web"}, {"tier", "b"}, {"team", "x"}};
  EXPECT_TRUE(b.Selects(Labelled(match)));
  EXPECT_FALSE(b.Selects(Labelled(match, "other")));  // another namespace
  StringPairs canary = match;
  canary.emplace_back("canary", "1");
  EXPECT_FALSE(b.Selects(Labelled(canary)));
  StringPairs zone = match;
  zone.emplace_back("zone", "z9");
  EXPECT_FALSE(b.Selects(Labelled(zone)));
  EXPECT_FALSE(b.Selects(Labelled({{"app", "web"}, {"tier", "c"}, {"team", "x"}})));
  EXPECT_FALSE(b.Selects(Labelled({{"app", "web"}, {"tier", "a"}})));  // no team
  // A later duplicate label wins.
  EXPECT_FALSE(b.Selects(Labelled({{"app", "web"}, {"tier", "a"}, {"team", "x"}, {"app", "db"}})));
}

TEST(DisruptionBudgetDecode, the_edge_cases_protect_rather_than_expose) {
  // policy/v1: {} selects every pod of the namespace, no selector selects none.
  EXPECT_TRUE(DecodeBudget(R"({"metadata":{"namespace":"ml"},"spec":{"selector":{}}})")
                  .Selects(Labelled({})));
  EXPECT_FALSE(DecodeBudget(R"({"metadata":{"namespace":"ml"},"spec":{}})").Selects(Labelled({})));
  EXPECT_FALSE(DecodeBudget(R"({"metadata":{"namespace":"ml"},"spec":{"selector":null}})")
                   .Selects(Labelled({})));
  // Selectors Kubernetes would refuse select the whole namespace.
  for (const char* bad :
       {R"({"key":"a","operator":"Gt","values":["1"]})", R"({"key":"a","operator":"In"})",
        R"({"key":"a","operator":"Exists","values":["x"]})", R"({"operator":"Exists"})"}) {
    DisruptionBudget b = DecodeBudget(
        std::string(R"({"metadata":{"namespace":"ml"},"spec":{"selector":{"matchExpressions":[)") +
        bad + "]}}}");
    EXPECT_TRUE(b.selector.unreadable) << bad;
    EXPECT_TRUE(b.Selects(Labelled({{"x", "y"}}))) << bad;
    EXPECT_FALSE(b.Selects(Labelled({{"x", "y"}}, "other"))) << bad;
  }
  // Past the budget, too.
  std::string many = R"({"metadata":{"namespace":"ml"},"spec":{"selector":{"matchLabels":{)";
  for (size_t i = 0; i <= kMaxSelectorItems; ++i) {
    many += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"v\"";
  }
  DisruptionBudget big = DecodeBudget(many + "}}}}");
  EXPECT_TRUE(big.selector.unreadable);
  EXPECT_TRUE(big.selector.requirements.empty());
  // No status allows nothing; counts are clamped.
  DisruptionBudget no_status = DecodeBudget(R"({"spec":{"selector":{}}})");
  EXPECT_FALSE(no_status.has_status);
  EXPECT_EQ(no_status.disruptions_allowed, 0);
  EXPECT_EQ(DecodeBudget(R"({"status":{"disruptionsAllowed":-3}})").disruptions_allowed, 0);
  EXPECT_EQ(DecodeBudget(R"({"status":{"disruptionsAllowed":99999999999}})").disruptions_allowed,
            INT32_MAX);
}

TEST(DisruptionBudgetDecode, wrong_shapes_are_errors_naming_the_field) {
  for (const char* bad :
       {R"({"spec":{"selector":[]}})", R"({"spec":{"selector":{"matchExpressions":{}}}})",
        R"({"spec":{"selector":{"matchLabels":{"a":{}}}}})",
        R"({"status":{"disruptionsAllowed":"many"}})", R"({"metadata":{"name":[]}})"}) {
    EXPECT_THROW(DecodeBudget(bad), InventoryError) << bad;
  }
  try {
    DecodeBudget(R"({"spec":{"selector":{"matchExpressions":[{"key":"a","values":7}]}}})");
    FAIL();
  } catch (const InventoryError& e) {
    EXPECT_NE(std::string(e.what()).find("spec: selector: matchExpressions: [0]"),
              std::string::npos)
        << e.what();
  }
}

// An API server of PodDisruptionBudgets only, in pages of one, with one item it cannot decode.
TEST(BudgetList, lists_every_page_and_skips_what_it_cannot_read) {
  httplib::Server server;
  int pages_served = 0;
  server.Get("/apis/policy/v1/poddisruptionbudgets", [&](const httplib::Request& req,
                                                         httplib::Response& res) {
    ++pages_served;
    std::string cont = req.get_param_value("continue");
    std::string item;
    std::string next;
    if (cont.empty()) {
      item = R"({"metadata":{"name":"a","namespace":"ml"},"spec":{"selector":{}}})";
      next = "page 2";  // a token that needs encoding
    } else if (cont == "page 2") {
      item = R"({"metadata":{"name":"bad"},"status":{"disruptionsAllowed":"x"}})";
      next = "3";
    } else {
      item = R"({"metadata":{"name":"c","namespace":"ml"},"status":{"disruptionsAllowed":2}})";
    }
    res.set_content(R"({"kind":"PodDisruptionBudgetList","metadata":{"continue":")" + next +
                        R"("},"items":[)" + item + "]}",
                    "application/json");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  Validated<BudgetListing> listed;
  {
    ApiClient client(config);  // closed before the server stops, which waits for its connections
    listed = ListDisruptionBudgets(client, 1);
  }
  server.stop();
  thread.join();
  ASSERT_TRUE(listed.ok()) << listed.problems.lines()[0];
  const BudgetListing& listing = listed.value;
  EXPECT_EQ(pages_served, 3);
  ASSERT_EQ(listing.budgets.size(), 2u);
  EXPECT_EQ(listing.budgets[0].key(), "ml/a");
  EXPECT_EQ(listing.budgets[1].disruptions_allowed, 2);
  EXPECT_EQ(listing.skipped, 1u);
}

TEST(BudgetList, a_refused_list_is_an_error) {
  httplib::Server server;
  server.Get("/apis/policy/v1/poddisruptionbudgets",
             [](const httplib::Request&, httplib::Response& res) { res.status = 403; });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  Validated<BudgetListing> listing;
  {
    ApiClient client(config);
    listing = ListDisruptionBudgets(client);
  }
  server.stop();
  thread.join();
  ASSERT_EQ(listing.problems.lines().size(), 1u);
  EXPECT_EQ(listing.problems.lines()[0], "/apis/policy/v1/poddisruptionbudgets: HTTP 403");
}

// --- the command ---

const std::string kClusterFixture = std::string(GPUSCHED_TEST_FIXTURES) + "/defrag/cluster.yaml";

// `gpusched defrag-plan ARGS` (words split at spaces), run in this process as main.cc runs it: its
// exit status and standard output (and standard error with `with_stderr`).
std::pair<int, std::string> RunDefragPlan(const std::string& args, bool with_stderr = false) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");  // never the in-cluster path
  std::vector<std::string> words;
  for (size_t at = 0; at < args.size();) {
    size_t space = std::min(args.find(' ', at), args.size());
    if (space > at) words.push_back(args.substr(at, space - at));
    at = space + 1;
  }
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int status = RunDefragPlanCommand(words);
  std::cout.flush();
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {status, with_stderr ? out + err : out};
}

TEST(DefragPlanCli, a_cluster_file_with_a_budget_gets_the_library_plan) {
  auto [status, out] = RunDefragPlan("--cluster " + kClusterFixture + " --json");
  ASSERT_EQ(status, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["budgets"], 1);
  ASSERT_EQ(j["plans"].size(), 1u);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["pod"], "research/pretrain-0");
  EXPECT_EQ(p["outcome"], "plan") << p["why"];
  EXPECT_EQ(p["node"], "h100-a");
  ASSERT_EQ(p["moves"].size(), 2u);
  EXPECT_EQ(p["moves"][0]["pod"], "serving/infer-a1");
  EXPECT_EQ(p["moves"][1]["pod"], "serving/infer-a2");
  EXPECT_EQ(p["gpusFreed"], 2);
  // The library's plan on the same file.
  Inventory inventory = LoadInventoryFile(kClusterFixture);
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(inventory, ledger);
  auto snapshot = ledger.BuildSnapshot();
  DefragReport r = PlanDefragmentation(DefaultPolicy(), *snapshot, snapshot->gpu_pods().pending,
                                       snapshot->gpu_pods().bound, inventory.budgets);
  ASSERT_EQ(r.plans.size(), 1u);
  ASSERT_EQ(r.plans[0].moves.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(p["moves"][k]["to"], r.plans[0].moves[k].to);
  // The budget is read from the file: allowing one disruption, it refuses the plan.
  std::string text = testing::ReadFile(kClusterFixture);
  std::string one = text;
  one.replace(one.find("disruptionsAllowed: 2"), 21, "disruptionsAllowed: 1");
  std::filesystem::path tight =
      std::filesystem::temp_directory_path() / ("defrag-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(tight) << one;
  auto [tight_status, tight_out] = RunDefragPlan("--cluster " + tight.string());
  std::filesystem::remove(tight);
  EXPECT_EQ(tight_status, 0);
  EXPECT_NE(tight_out.find("no plan: "), std::string::npos) << tight_out;
}

TEST(DefragPlanCli, text_one_pod_and_the_errors) {
  auto [status, out] = RunDefragPlan("--cluster " + kClusterFixture + " --pod research/pretrain-0");
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("move serving/infer-a1 (1 GPU) from h100-a to "), std::string::npos) << out;
  EXPECT_NE(out.find("then it fits on h100-a"), std::string::npos) << out;
  // The bundled sample: a report, whatever it plans.
  auto [sample_status, sample_out] = RunDefragPlan("--json");
  EXPECT_EQ(sample_status, 0);
  EXPECT_TRUE(nlohmann::json::parse(sample_out)["plans"].is_array());
  EXPECT_EQ(RunDefragPlan("--cluster " + kClusterFixture + " --pod research/nope").first, 2);
  EXPECT_EQ(RunDefragPlan("--pod pretrain-0").first, 2);
  EXPECT_EQ(RunDefragPlan("--pod a/b/c").first, 2);
  EXPECT_EQ(RunDefragPlan("--cluster a.yaml --kubeconfig b").first, 2);
  EXPECT_EQ(RunDefragPlan("extra").first, 2);
}

TEST(DefragPlanCli, an_api_server_that_lists_no_budgets_fails_closed) {
  testing::FakeApiServer server;  // nodes and pods only: budgets are 404
  server.UpsertNode(testing::MakeGpuNode("n1", 8));
  server.UpsertPod(testing::MakeGpuPod("ml", "p1", "uid-p1", "n1", 4));
  std::filesystem::path kubeconfig =
      std::filesystem::temp_directory_path() / ("defrag-kubeconfig-" + std::to_string(::getpid()));
  server.WriteKubeconfig(kubeconfig);
  auto [status, out] = RunDefragPlan("--kubeconfig " + kubeconfig.string(), true);
  std::filesystem::remove(kubeconfig);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("/apis/policy/v1/poddisruptionbudgets: HTTP 404"), std::string::npos) << out;
}

// Listed, not watched: the initial list slims pods to what the ledger reads, but a GPU pod keeps
// its labels (budgets select by them) and gpusched.io/ annotations (the engine reads them).
TEST(DefragPlanLive, listed_gpu_pods_keep_labels_and_annotations) {
  testing::FakeApiServer server;
  server.UpsertNode(testing::MakeGpuNode("n1", 8));
  nlohmann::json gpu = testing::MakeGpuPod("ml", "web-1", "uid-web-1", "n1", 1);
  gpu["metadata"]["labels"] = {{"app", "web"}};
  gpu["metadata"]["annotations"] = {{"gpusched.io/gpu-product", "NVIDIA-H100-*"}};
  server.UpsertPod(gpu);
  nlohmann::json cpu = testing::MakeGpuPod("ml", "cpu-1", "uid-cpu-1", "n1", 0);
  cpu["metadata"]["labels"] = {{"app", "cpu"}};
  server.UpsertPod(cpu);
  KubeConfig config;
  config.server = server.url();
  config.token = testing::FakeApiServer::kToken;
  Published<ClusterSnapshot> published;
  LiveInventoryOptions options;
  options.publish_interval = std::chrono::milliseconds(5);
  LiveInventory inventory(config, GpuResourceNames(), published, options);
  for (int i = 0; i < 1000 && !inventory.Status().synced; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(inventory.Status().synced);
  const GpuPods& pods = published.Get()->gpu_pods();
  ASSERT_EQ(pods.bound.size(), 1u);
  EXPECT_EQ(pods.bound[0].labels, (StringPairs{{"app", "web"}}));
  EXPECT_NE(pods.bound[0].annotation("gpusched.io/gpu-product"), nullptr);
  EXPECT_FALSE(
      testing::BudgetSelecting("web", 1).Selects(pods.bound[0]));  // a budget of namespace default
  DisruptionBudget ml = testing::BudgetSelecting("web", 1);
  ml.namespace_name = "ml";
  EXPECT_TRUE(ml.Selects(pods.bound[0]));
}

}  // namespace
}  // namespace gpusched::defrag_plan_test
