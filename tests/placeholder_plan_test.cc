#include "gpusched/planning/placeholder_plan.h"
#include "gpusched/planning/why_pending.h"

#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::placeholder_plan_test {
namespace {

constexpr int64_t kNow = 1795617027;

// `count` A100 x8 nodes whose driver is 535.104.05 (GFD labels), named a100-000...
std::vector<NodeInfo> A100Nodes(int count) {
  std::vector<NodeInfo> out;
  for (int i = 0; i < count; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "a100-%03d", i);
    out.push_back(testing::LabeledNode(name, 8,
                                       {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                                        {"nvidia.com/gpu.memory", "40960"},
                                        {"nvidia.com/gpu.count", "8"},
                                        {"nvidia.com/cuda.driver-version.full", "535.104.05"}})
                      .info);
  }
  return out;
}

// A pod of one GPU in namespace ml, created `age` seconds before kNow; `annotations` and `extra`
// (more members of metadata, such as labels) as JSON members.
PodInfo GpuPod(const std::string& name, int64_t age, const std::string& annotations = "",
               const std::string& node = "", const std::string& labels = "") {
  PodInfo p = testing::PodFromJson(
      R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + name +
      R"(-uid","labels":{)" + labels + R"(},"annotations":{)" + annotations +
      R"(}},"spec":{"nodeName":")" + node +
      R"(","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},)" +
      R"("status":{"phase":")" + (node.empty() ? "Pending" : "Running") + R"("}})");
  p.created_unix = kNow - age;
  return p;
}

PodInfo PlaceholderOf(const std::string& owner, const std::string& node = "") {
  return GpuPod(std::string(kPlaceholderNamePrefix) + owner + "-uid", 1, "", node,
                "\"gpusched.io/placeholder\":\"" + owner + "-uid\"");
}

const std::string kOldDriver = R"("gpusched.io/min-cuda-driver":"550")";

std::shared_ptr<const ClusterSnapshot> Snapshot(const std::vector<NodeInfo>& nodes,
                                                const std::vector<PodInfo>& pods) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  for (const NodeInfo& n : nodes) ledger.UpsertNode(n);
  for (const PodInfo& p : pods) ledger.UpsertPod(p);
  return ledger.BuildSnapshot();
}

Policy PolicyWith(bool enabled = true, int64_t max_pods = 50) {
  PolicySpec spec = DefaultPolicySpec();
  spec.autoscaling.placeholders.enabled = enabled;
  spec.autoscaling.placeholders.max_pods = max_pods;
  return Policy(spec);
}

TEST(PlaceholderPlan, a_pod_only_gpusched_refuses_gets_one_excluding_every_node_it_refuses) {
  auto snapshot = Snapshot(A100Nodes(300), {GpuPod("old-driver", 30, kOldDriver),
                                            GpuPod("fits", 30), GpuPod("young", 1, kOldDriver)});
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow);
  ASSERT_EQ(plan.create.size(), 1u);
  EXPECT_EQ(plan.create[0].owner.name, "old-driver");
  ASSERT_EQ(plan.create[0].excluded_nodes.size(), 300u);
  EXPECT_EQ(plan.create[0].excluded_nodes.front(), "a100-000");
  EXPECT_EQ(plan.create[0].excluded_nodes.back(), "a100-299");
  EXPECT_EQ(plan.blind, 1u);
  EXPECT_TRUE(plan.remove.empty());
  // The pod gpusched passes but that waits: touched by the writer if it keeps waiting.
  ASSERT_EQ(plan.fit_but_wait.size(), 1u);
  EXPECT_EQ(plan.fit_but_wait[0].name, "fits");
}

// A pod that also references a ResourceClaim cannot be copied whole: it gets no placeholder, though
// gpusched alone refuses it as it refuses its twin without one.
TEST(PlaceholderPlan, a_pod_that_asks_beyond_its_requests_gets_none) {
  PodInfo with_claim = GpuPod("with-claim", 30, kOldDriver);
  with_claim.claims.push_back({"scratch", "with-claim-scratch", false});
  EXPECT_FALSE(AsksOnlyThroughRequests(with_claim));
  auto snapshot = Snapshot(A100Nodes(3), {with_claim, GpuPod("old-driver", 30, kOldDriver)});
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow);
  ASSERT_EQ(plan.create.size(), 1u);
  EXPECT_EQ(plan.create[0].owner.name, "old-driver");
  EXPECT_EQ(plan.blind, 1u);
}

TEST(PlaceholderPlan, pods_the_autoscaler_sees_itself_get_none) {
  // No node meets the pin, or every node is full: kube-scheduler's own filters refuse them too.
  std::vector<PodInfo> pods = {GpuPod("pinned-l4", 30, R"("gpusched.io/gpu-product":"NVIDIA-L4")")};
  PodInfo selector = testing::PodFromJson(
      R"({"metadata":{"name":"sel","namespace":"ml","uid":"sel-uid"},"spec":{"nodeSelector":)"
      R"({"nvidia.com/gpu.product":"NVIDIA-L4"},"containers":[{"name":"c","resources":)"
      R"({"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}})");
  selector.created_unix = kNow - 30;
  pods.push_back(selector);
  auto snapshot = Snapshot(A100Nodes(5), pods);
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow);
  // The product pin by annotation is gpusched's alone (no webhook here): blind; the selector not.
  ASSERT_EQ(plan.create.size(), 1u);
  EXPECT_EQ(plan.create[0].owner.name, "pinned-l4");
}

TEST(PlaceholderPlan, placeholders_end_when_their_work_is_done) {
  std::vector<PodInfo> pods = {GpuPod("arrived", 30, kOldDriver),
                               PlaceholderOf("arrived", "new-560"),  // node came
                               GpuPod("waits", 30, kOldDriver),
                               PlaceholderOf("waits", "a100-001"),  // node not labelled
                               GpuPod("bound", 30, "", "a100-002"),
                               PlaceholderOf("bound"),  // owner bound
                               PlaceholderOf("gone"),   // owner gone
                               GpuPod("fits", 30),
                               PlaceholderOf("fits"),  // owner fits
                               GpuPod("kept", 30, kOldDriver),
                               PlaceholderOf("kept")};  // fits new-560 now
  std::vector<NodeInfo> nodes = A100Nodes(4);
  nodes.push_back(testing::LabeledNode("new-560", 8,
                                       {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                                        {"nvidia.com/cuda.driver-version.full", "560.35.03"}})
                      .info);
  auto snapshot = Snapshot(nodes, pods);
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow);
  std::map<std::string, PlaceholderEnd> ends;
  for (const auto& d : plan.remove) ends[d.owner_uid] = d.end;
  EXPECT_EQ(ends,
            (std::map<std::string, PlaceholderEnd>{{"arrived-uid", PlaceholderEnd::kNodeCame},
                                                   {"bound-uid", PlaceholderEnd::kOwnerBound},
                                                   {"gone-uid", PlaceholderEnd::kOwnerGone},
                                                   {"fits-uid", PlaceholderEnd::kOwnerFits},
                                                   {"kept-uid", PlaceholderEnd::kOwnerFits}}));
  EXPECT_EQ(plan.existing, 6u);
  // "waits"' node is not ready for it (its driver too old, as before GPU Feature Discovery ran):
  // its placeholder keeps the node; neither gets a second one.
  EXPECT_TRUE(plan.create.empty());
  // holdSeconds after it was made, the placeholder goes anyway.
  PlaceholderPlan later = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow + 600);
  size_t waits_removed = 0;
  for (const auto& d : later.remove) waits_removed += d.owner_uid == "waits-uid";
  EXPECT_EQ(waits_removed, 1u);
}

TEST(PlaceholderPlan, a_held_pod_gets_no_new_one_until_its_hold_ends) {
  auto snapshot = Snapshot(A100Nodes(3), {GpuPod("old-driver", 30, kOldDriver)});
  PlaceholderHolds holds{{"old-driver-uid", kNow + 10}};
  PlaceholderPlan held = PlanPlaceholders(PolicyWith(), *snapshot, holds, kNow);
  EXPECT_TRUE(held.create.empty());
  EXPECT_EQ(held.held, 1u);
  PlaceholderPlan later = PlanPlaceholders(PolicyWith(), *snapshot, holds, kNow + 10);
  EXPECT_EQ(later.create.size(), 1u);
}

TEST(PlaceholderPlan, the_budget_bounds_how_many_exist_and_are_made_per_pass) {
  std::vector<PodInfo> pods;
  for (int i = 0; i < 30; ++i) pods.push_back(GpuPod("p" + std::to_string(i), 30 + i, kOldDriver));
  auto snapshot = Snapshot(A100Nodes(3), pods);
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(true, 50), *snapshot, {}, kNow);
  EXPECT_EQ(plan.create.size(), kMaxCreatesPerPass);
  EXPECT_EQ(plan.create[0].owner.name, "p29");  // the longest waiting first
  EXPECT_EQ(plan.over_budget, 30 - kMaxCreatesPerPass);
  PlaceholderPlan capped = PlanPlaceholders(PolicyWith(true, 4), *snapshot, {}, kNow);
  EXPECT_EQ(capped.create.size(), 4u);
}

TEST(PlaceholderPlan, a_pod_refused_on_too_many_nodes_is_counted_not_given_one) {
  auto snapshot =
      Snapshot(A100Nodes(kMaxExcludedNodes + 1), {GpuPod("old-driver", 30, kOldDriver)});
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow);
  EXPECT_TRUE(plan.create.empty());
  EXPECT_EQ(plan.too_many_nodes, 1u);
}

TEST(PlaceholderPlan, turned_off_every_placeholder_goes_and_none_is_made) {
  auto snapshot = Snapshot(A100Nodes(3), {GpuPod("old-driver", 30, kOldDriver),
                                          GpuPod("kept", 30, kOldDriver), PlaceholderOf("kept")});
  PlaceholderPlan plan = PlanPlaceholders(PolicyWith(false), *snapshot, {}, kNow);
  EXPECT_TRUE(plan.create.empty());
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0].end, PlaceholderEnd::kDisabled);
}

TEST(PlaceholderPlan, a_pod_named_like_a_placeholder_without_the_label_is_a_pod) {
  PodInfo impostor = GpuPod(std::string(kPlaceholderNamePrefix) + "x", 30, kOldDriver);
  EXPECT_FALSE(IsPlaceholder(impostor));
  EXPECT_TRUE(IsPlaceholder(PlaceholderOf("x")));
  auto snapshot = Snapshot(A100Nodes(2), {impostor});
  EXPECT_EQ(PlanPlaceholders(PolicyWith(), *snapshot, {}, kNow).create.size(), 1u);
}

TEST(PlaceholderPlan, why_pending_names_the_placeholder_that_stands_for_a_pod) {
  auto snapshot =
      Snapshot(A100Nodes(3), {GpuPod("old-driver", 30, kOldDriver), PlaceholderOf("old-driver")});
  WhyPendingReport report = ComputeWhyPending(PolicyWith(), *snapshot, {.now_unix = kNow});
  bool named = false;
  for (const PendingGroup& g : report.groups) {
    if (g.sample.front() == "ml/old-driver") {
      named = g.autoscaler.find("; placeholder gpusched-placeholder-old-driver-uid") !=
              std::string::npos;
      EXPECT_EQ(g.autoscaler.find(kAutoscalerBlind), 0u) << g.autoscaler;
    }
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace gpusched::placeholder_plan_test
