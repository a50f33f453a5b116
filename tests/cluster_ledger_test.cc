#include "gpusched/cluster/cluster_ledger.h"

#include <atomic>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/util/published.h"
#include "testing/test_support.h"

namespace gpusched::cluster_ledger_test {
namespace {

using testing::Units;

NodeInfo GpuNode(const std::string& name, int64_t gpus) {
  return testing::MakeNode(name, ResourceList{{"nvidia.com/gpu", Units(gpus)}}).info;
}

PodInfo BoundPod(const std::string& name, const std::string& node, int64_t gpus,
                 PodPhase phase = PodPhase::kRunning) {
  PodInfo p = testing::MakePod(name, ResourceList{{"nvidia.com/gpu", Units(gpus)}, {"cpu", 100}});
  p.node_name = node;
  p.phase = phase;
  return p;
}

int64_t Used(const ClusterSnapshot& s, const char* node) {
  return s.Find(node)->used.units("nvidia.com/gpu");
}

TEST(ClusterLedger, bound_running_pods_are_charged_to_their_node) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertPod(BoundPod("a", "n1", 2));
  ledger.UpsertPod(BoundPod("b", "n1", 3));
  ledger.UpsertPod(BoundPod("pending", "", 4));
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(Used(*s, "n1"), 5);
  EXPECT_EQ(s->Find("n1")->pod_count, 2);
  EXPECT_EQ(s->Find("n1")->gpu_pod_count, 2);
  EXPECT_EQ(s->Find("n1")->used.milli("cpu"), 200);  // cpu counts too: it decides packing
}

TEST(ClusterLedger, replayed_events_never_double_count) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  for (int i = 0; i < 3; ++i) ledger.UpsertPod(BoundPod("a", "n1", 2));
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 2);
  ledger.DeletePod("uid-a");
  ledger.DeletePod("uid-a");
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
}

TEST(ClusterLedger, an_assumed_pod_counts_until_the_watch_reports_where_it_went) {
  using Clock = ClusterLedger::Clock;
  using Result = ClusterLedger::AssumeResult;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertNode(GpuNode("n2", 8));
  Clock::time_point now = Clock::now();
  PodInfo pending = BoundPod("a", "", 2);
  ledger.UpsertPod(pending);  // the watch reports it pending
  EXPECT_EQ(ledger.Assume("uid-a", "n1", now, std::chrono::hours(1)), Result::kApplied);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 2);
  EXPECT_EQ(ledger.assumed_count(), 1u);
  // The watch still reports the pod unbound (it lags the scheduler): the assumption stands.
  ledger.UpsertPod(pending);
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(Used(*s, "n1"), 2);
  ASSERT_NE(s->AssumptionOf("uid-a"), nullptr);
  EXPECT_EQ(s->AssumptionOf("uid-a")->node, "n1");
  // The watch reports it bound elsewhere: the report takes over.
  ledger.UpsertPod(BoundPod("a", "n2", 2));
  s = ledger.BuildSnapshot();
  EXPECT_EQ(Used(*s, "n1"), 0);
  EXPECT_EQ(Used(*s, "n2"), 2);
  EXPECT_EQ(s->AssumptionOf("uid-a"), nullptr);
  EXPECT_EQ(ledger.assumed_count(), 0u);
  // A pod the watch reports bound is not assumed over.
  EXPECT_EQ(ledger.Assume("uid-a", "n1", now, std::chrono::hours(1)), Result::kRefused);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
}

TEST(ClusterLedger, only_watched_pending_gpu_pods_are_assumed_with_their_watched_requests) {
  using Clock = ClusterLedger::Clock;
  using Result = ClusterLedger::AssumeResult;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  Clock::time_point now = Clock::now();
  // Made-up pods (any client can send one) never count, and cost the ledger nothing.
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(ledger.Assume("made-up-" + std::to_string(i), "n1", now, std::chrono::hours(1)),
              Result::kUnknownPod);
  }
  EXPECT_EQ(ledger.assumed_count(), 0u);
  EXPECT_EQ(ledger.gpu_pods_known(), 0u);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
  // Terminal pods and pods without GPUs are refused.
  ledger.UpsertPod(BoundPod("done", "", 2, PodPhase::kSucceeded));
  EXPECT_EQ(ledger.Assume("uid-done", "n1", now, std::chrono::hours(1)), Result::kRefused);
  ledger.UpsertPod(testing::MakePod("cpu", ResourceList{{"cpu", 1000}}));
  EXPECT_NE(ledger.Assume(PodKey(testing::MakePod("cpu", ResourceList{})), "n1", now,
                          std::chrono::hours(1)),
            Result::kApplied);
  // The watched requests count (2 GPUs), whatever a request claimed.
  ledger.UpsertPod(BoundPod("a", "", 2));
  EXPECT_EQ(ledger.Assume("uid-a", "n1", now, std::chrono::hours(1)), Result::kApplied);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 2);
}

TEST(ClusterLedger, a_retried_pod_holds_one_assumption_that_never_outlasts_its_first_window) {
  using Clock = ClusterLedger::Clock;
  using Result = ClusterLedger::AssumeResult;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertNode(GpuNode("n2", 8));
  ledger.UpsertPod(BoundPod("a", "", 8));
  Clock::time_point t0 = Clock::now();
  auto ttl = std::chrono::seconds(30);
  EXPECT_EQ(ledger.Assume("uid-a", "n1", t0, ttl), Result::kApplied);
  // Retried after 10 s (kube-scheduler's backoff): replaced, on another node, not renewed.
  EXPECT_TRUE(ledger.Forget("uid-a"));
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
  EXPECT_EQ(ledger.Assume("uid-a", "n2", t0 + std::chrono::seconds(10), ttl), Result::kApplied);
  EXPECT_EQ(ledger.Assume("uid-a", "n2", t0 + std::chrono::seconds(20), ttl), Result::kApplied);
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(Used(*s, "n1"), 0);
  EXPECT_EQ(Used(*s, "n2"), 8);
  EXPECT_EQ(ledger.assumed_count(), 1u);
  // The watch re-reporting the pod pending keeps the window.
  ledger.UpsertPod(BoundPod("a", "", 8));
  EXPECT_EQ(ledger.ExpireAssumptions(t0 + std::chrono::seconds(29)), 0u);
  EXPECT_EQ(ledger.ExpireAssumptions(t0 + std::chrono::seconds(31)), 1u);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n2"), 0);
  // Past the first window no retry counts again, so a pod that never binds blocks no node.
  EXPECT_EQ(ledger.Assume("uid-a", "n2", t0 + std::chrono::seconds(40), ttl), Result::kRefused);
  ledger.UpsertPod(BoundPod("a", "", 8));
  EXPECT_EQ(ledger.Assume("uid-a", "n2", t0 + std::chrono::seconds(50), ttl), Result::kRefused);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n2"), 0);
}

TEST(ClusterLedger, assumptions_expire_and_deleted_pods_take_theirs_along) {
  using Clock = ClusterLedger::Clock;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertPod(BoundPod("a", "", 2));
  ledger.UpsertPod(BoundPod("b", "", 3));
  Clock::time_point now = Clock::now();
  ledger.Assume("uid-a", "n1", now, std::chrono::seconds(1));
  ledger.Assume("uid-b", "n1", now, std::chrono::seconds(10));
  // Re-assuming the same pod (kube-scheduler retried it) moves it rather than counting twice.
  ledger.Assume("uid-b", "n1", now, std::chrono::seconds(10));
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 5);
  EXPECT_EQ(ledger.ExpireAssumptions(now + std::chrono::seconds(2)), 1u);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 3);
  ledger.DeletePod("uid-b");
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
  EXPECT_EQ(ledger.ExpireAssumptions(now + std::chrono::hours(1)), 0u);
  EXPECT_EQ(ledger.assumed_count(), 0u);
}

TEST(ClusterLedger, finished_or_deleted_pods_release_gpus_at_once) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertPod(BoundPod("a", "n1", 2));
  ledger.UpsertPod(BoundPod("b", "n1", 2));
  ledger.UpsertPod(BoundPod("a", "n1", 2, PodPhase::kSucceeded));
  ledger.UpsertPod(BoundPod("b", "n1", 2, PodPhase::kFailed));
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 0);
  ledger.DeletePod("uid-a");
  EXPECT_EQ(ledger.gpu_pods_known(), 1u);
}

TEST(ClusterLedger, pod_seen_before_its_node_is_counted_when_the_node_arrives) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertPod(BoundPod("a", "late", 3));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("late"), nullptr);
  ledger.UpsertNode(GpuNode("late", 4));
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "late"), 3);
}

TEST(ClusterLedger, a_pod_rebound_to_another_node_moves_its_charge) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertNode(GpuNode("n2", 8));
  ledger.UpsertPod(BoundPod("a", "n1", 2));
  ledger.UpsertPod(BoundPod("a", "n2", 2));
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(Used(*s, "n1"), 0);
  EXPECT_EQ(Used(*s, "n2"), 2);
}

TEST(ClusterLedger, pods_without_gpu_requests_count_only_while_bound) {
  ClusterLedger ledger{GpuResourceNames()};
  NodeInfo node = GpuNode("n1", 8);
  node.allocatable.Add("cpu", 64000);
  ledger.UpsertNode(node);
  PodInfo cpu_only = testing::MakePod("c", ResourceList{{"cpu", 1500}, {"memory", 4096}});
  ledger.UpsertPod(cpu_only);  // pending: nothing to keep
  EXPECT_EQ(ledger.pods_kept(), 0u);
  cpu_only.node_name = "n1";
  ledger.UpsertPod(cpu_only);
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(s->Find("n1")->used.milli("cpu"), 1500);
  EXPECT_EQ(s->Find("n1")->used.milli("memory"), 4096);
  EXPECT_EQ(s->Find("n1")->pod_count, 1);
  EXPECT_EQ(s->Find("n1")->gpu_pod_count, 0);
  EXPECT_EQ(s->Find("n1")->free_milli("cpu"), 62500);
  EXPECT_EQ(ledger.gpu_pods_known(), 0u);
  EXPECT_EQ(ledger.pods_kept(), 1u);
  // Neither observed (they would crowd out the GPU shapes) nor assumable.
  EXPECT_TRUE(s->observed_workload().empty());
  EXPECT_EQ(ledger.Assume("uid-c", "n1", ClusterLedger::Clock::now(), std::chrono::seconds(30)),
            ClusterLedger::AssumeResult::kRefused);
  cpu_only.phase = PodPhase::kSucceeded;
  ledger.UpsertPod(cpu_only);
  EXPECT_EQ(ledger.pods_kept(), 0u);
  EXPECT_FALSE(ledger.BuildSnapshot()->Find("n1")->used.contains("cpu"));
}

TEST(ClusterLedger, observed_gpu_shapes_carry_their_cpu) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertPod(BoundPod("a", "", 2));
  auto snapshot = ledger.BuildSnapshot();
  auto observed = snapshot->observed_workload();
  ASSERT_EQ(observed.size(), 1u);
  EXPECT_EQ(observed[0].shape.num_gpu, 2);
  EXPECT_EQ(observed[0].shape.cpu_milli, 100);
}

TEST(ClusterLedger, an_assumption_carries_the_pods_cpu_and_memory) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  PodInfo pod = testing::MakePod(
      "a", ResourceList{{"nvidia.com/gpu", Units(1)}, {"cpu", 8000}, {"memory", 1024}});
  ledger.UpsertPod(pod);
  ASSERT_EQ(ledger.Assume("uid-a", "n1", ClusterLedger::Clock::now(), std::chrono::seconds(30)),
            ClusterLedger::AssumeResult::kApplied);
  auto s = ledger.BuildSnapshot();
  EXPECT_EQ(s->Find("n1")->used.milli("cpu"), 8000);
  const Assumption* own = s->AssumptionOf("uid-a");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->charge.requests.milli("cpu"), 8000);
  EXPECT_EQ(own->charge.requests.milli("memory"), 1024);
  EXPECT_EQ(own->charge.requests.units("nvidia.com/gpu"), 1);
  EXPECT_TRUE(own->charge.gpu_pod);
}

TEST(ClusterLedger, snapshots_share_unchanged_nodes_and_never_change) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertNode(GpuNode("n2", 8));
  auto first = ledger.BuildSnapshot();
  ledger.UpsertPod(BoundPod("a", "n2", 2));
  ledger.DeleteNode("n1");
  auto second = ledger.BuildSnapshot();
  EXPECT_GT(second->generation(), first->generation());
  EXPECT_EQ(first->size(), 2u);
  EXPECT_EQ(Used(*first, "n2"), 0);  // the old snapshot is untouched
  EXPECT_EQ(second->size(), 1u);
  EXPECT_EQ(second->Find("n1"), nullptr);
  EXPECT_EQ(Used(*second, "n2"), 2);

  ledger.UpsertNode(GpuNode("n3", 4));
  auto third = ledger.BuildSnapshot();
  EXPECT_EQ(third->Find("n2"), second->Find("n2"));  // shared, not copied
  EXPECT_NE(third->Find("n3"), nullptr);
}

std::vector<std::string> Names(const std::vector<PodInfo>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p.name);
  return out;
}

TEST(ClusterLedger, snapshots_carry_the_pending_and_bound_gpu_pods) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  PodInfo waiting = BoundPod("wait-b", "", 8, PodPhase::kPending);
  waiting.priority = 100;
  waiting.created_unix = 1700000000;
  ledger.UpsertPod(waiting);
  ledger.UpsertPod(BoundPod("wait-a", "", 1, PodPhase::kPending));
  ledger.UpsertPod(BoundPod("run", "n1", 2));
  ledger.UpsertPod(BoundPod("starting", "n1", 1, PodPhase::kPending));  // bound, not running yet
  ledger.UpsertPod(BoundPod("done", "n1", 2, PodPhase::kSucceeded));
  ledger.UpsertPod(BoundPod("failed-unbound", "", 2, PodPhase::kFailed));
  ledger.UpsertPod(testing::MakePod("cpu-only", ResourceList{{"cpu", 100}}));  // pending, no GPU
  auto s = ledger.BuildSnapshot();
  // Sorted by namespace and name; terminal pods and pods without GPUs are in neither list.
  EXPECT_EQ(Names(s->gpu_pods().pending), (std::vector<std::string>{"wait-a", "wait-b"}));
  EXPECT_EQ(Names(s->gpu_pods().bound), (std::vector<std::string>{"run", "starting"}));
  const PodInfo& kept = s->gpu_pods().pending[1];
  EXPECT_EQ(kept.priority, 100);  // the PodInfo as the watch reported it
  EXPECT_EQ(kept.created_unix, 1700000000);
  EXPECT_EQ(kept.requests.units("nvidia.com/gpu"), 8);

  // The pod is bound, then finishes: it moves, then leaves.
  ledger.UpsertPod(BoundPod("wait-b", "n1", 8));
  s = ledger.BuildSnapshot();
  EXPECT_EQ(Names(s->gpu_pods().pending), (std::vector<std::string>{"wait-a"}));
  EXPECT_EQ(Names(s->gpu_pods().bound), (std::vector<std::string>{"run", "starting", "wait-b"}));
  ledger.UpsertPod(BoundPod("wait-b", "n1", 8, PodPhase::kSucceeded));
  ledger.DeletePod("uid-run");
  s = ledger.BuildSnapshot();
  EXPECT_EQ(Names(s->gpu_pods().bound), (std::vector<std::string>{"starting"}));
}

TEST(ClusterLedger, the_gpu_pod_list_is_shared_until_a_gpu_pod_changes) {
  using Clock = ClusterLedger::Clock;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertPod(BoundPod("a", "", 2, PodPhase::kPending));
  auto first = ledger.BuildSnapshot();
  // Nodes, pods without GPUs and assumptions leave the list as it is: the same object.
  ledger.UpsertNode(GpuNode("n2", 8));
  PodInfo cpu = testing::MakePod("cpu-only", ResourceList{{"cpu", 100}});
  cpu.node_name = "n1";
  ledger.UpsertPod(cpu);
  ASSERT_EQ(ledger.Assume("uid-a", "n1", Clock::now(), std::chrono::hours(1)),
            ClusterLedger::AssumeResult::kApplied);
  auto second = ledger.BuildSnapshot();
  EXPECT_EQ(second->shared_gpu_pods(), first->shared_gpu_pods());
  ASSERT_EQ(second->gpu_pods().pending.size(), 1u);  // assumed, still pending to the watch
  EXPECT_TRUE(second->gpu_pods().bound.empty());
  // A GPU pod reported again: a new list; the old snapshot keeps its own.
  ledger.UpsertPod(BoundPod("a", "n1", 2));
  auto third = ledger.BuildSnapshot();
  EXPECT_NE(third->shared_gpu_pods(), second->shared_gpu_pods());
  EXPECT_EQ(third->gpu_pods().bound.size(), 1u);
  EXPECT_EQ(second->gpu_pods().pending.size(), 1u);
  // A snapshot built without pods (the simulator's) has empty lists.
  ClusterSnapshot bare({}, 1);
  EXPECT_TRUE(bare.gpu_pods().pending.empty());
  EXPECT_TRUE(bare.gpu_pods().bound.empty());
}

// A writer publishes snapshots while readers use them: every snapshot a reader sees is complete
// and consistent. Run under ThreadSanitizer by the test script.
TEST(ClusterLedger, readers_see_only_whole_snapshots_while_a_writer_publishes) {
  constexpr int kNodes = 20;
  constexpr int kRounds = 300;
  ClusterLedger ledger{GpuResourceNames()};
  for (int i = 0; i < kNodes; ++i) ledger.UpsertNode(GpuNode("n" + std::to_string(i), 8));
  Published<ClusterSnapshot> published(ledger.BuildSnapshot());
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};

  auto reader = [&] {
    for (int i = 0; i < 100000 && !done.load(); ++i) {
      auto s = published.Get();
      int64_t total = 0;
      for (const auto& n : s->nodes()) total += n->used.units("nvidia.com/gpu");
      // The writer always moves a whole pod in one publication, so totals are even.
      if (s->size() != kNodes || total % 2 != 0) violations.fetch_add(1);
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < kRounds; ++round) {
    std::string node = "n" + std::to_string(round % kNodes);
    ledger.UpsertPod(BoundPod("p" + std::to_string(round % 7), node, 2));
    published.Set(ledger.BuildSnapshot());
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(violations.load(), 0);
  int64_t total = 0;
  auto last = published.Get();
  for (const auto& n : last->nodes()) total += n->used.units("nvidia.com/gpu");
  EXPECT_EQ(total, 7 * 2);
}

// A pending pod asking for `gpus` GPUs with `spec` (JSON members of a pod spec beside its
// containers), decoded as the watch decodes it.
PodInfo PinnedPod(const std::string& name, int64_t gpus, const std::string& spec) {
  return testing::PodFromJson(R"({"metadata":{"name":")" + name + R"(","uid":")" + name +
                              R"("},"spec":{)" + spec +
                              R"(,"containers":[{"resources":{"limits":{"nvidia.com/gpu":)" +
                              std::to_string(gpus) + "}}}]}}");
}

std::string RequiredAffinity(const std::string& expressions) {
  return R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
      "nodeSelectorTerms":[{"matchExpressions":[)" +
         expressions + "]}]}}}";
}

void AddMixedNodes(ClusterLedger& ledger) {
  for (int i = 0; i < 2; ++i) {
    ledger.UpsertNode(testing::LabeledNode("a100-" + std::to_string(i), 8,
                                           {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                                            {"nvidia.com/gpu.memory", "81920"}})
                          .info);
    ledger.UpsertNode(testing::LabeledNode("l4-" + std::to_string(i), 4,
                                           {{"nvidia.com/gpu.product", "NVIDIA-L4"},
                                            {"nvidia.com/gpu.memory", "23034"}})
                          .info);
  }
}

// The observed shapes' GPU counts and products, for comparing workloads.
std::vector<std::pair<int32_t, std::vector<std::string>>> Pinned(const ClusterSnapshot& s) {
  std::vector<std::pair<int32_t, std::vector<std::string>>> out;
  for (const auto& w : s.observed_workload()) out.emplace_back(w.shape.num_gpu, w.shape.gpu_models);
  return out;
}

TEST(ClusterLedger, pods_pinned_by_node_affinity_are_observed_as_by_node_selector) {
  ClusterLedger by_selector{GpuResourceNames()};
  AddMixedNodes(by_selector);
  by_selector.UpsertPod(
      PinnedPod("l4", 4, R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"})"));
  by_selector.UpsertPod(
      PinnedPod("a100", 8, R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"})"));
  ClusterLedger by_affinity{GpuResourceNames()};
  AddMixedNodes(by_affinity);
  by_affinity.UpsertPod(
      PinnedPod("l4", 4,
                RequiredAffinity(
                    R"({"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]})")));
  // Written on another label, and with NotIn: what counts is which products' nodes meet the pins.
  by_affinity.UpsertPod(PinnedPod(
      "a100", 8,
      RequiredAffinity(R"({"key":"nvidia.com/gpu.memory","operator":"Gt","values":["40000"]})")));
  auto selector = by_selector.BuildSnapshot();
  auto affinity = by_affinity.BuildSnapshot();
  using Shapes = std::vector<std::pair<int32_t, std::vector<std::string>>>;
  EXPECT_EQ(Pinned(*selector), (Shapes{{4, {"NVIDIA-L4"}}, {8, {"NVIDIA-A100-SXM4-80GB"}}}));
  EXPECT_EQ(Pinned(*affinity), Pinned(*selector));

  // Pins every product meets are no pins; pins no product meets count for nothing.
  ClusterLedger other{GpuResourceNames()};
  AddMixedNodes(other);
  other.UpsertPod(PinnedPod(
      "any", 2, RequiredAffinity(R"({"key":"nvidia.com/gpu.product","operator":"Exists"})")));
  other.UpsertPod(PinnedPod(
      "not-a100", 1,
      RequiredAffinity(
          R"({"key":"nvidia.com/gpu.product","operator":"NotIn","values":["NVIDIA-A100-SXM4-80GB"]})")));
  other.UpsertPod(
      PinnedPod("h100", 4, R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-H100"})"));
  EXPECT_EQ(Pinned(*other.BuildSnapshot()), (Shapes{{1, {"NVIDIA-L4"}}, {2, {}}}));
}

TEST(ClusterLedger, pinned_pods_seen_before_any_gpu_node_wait_for_the_nodes) {
  // After a restart the pod list may come before the node list.
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertPod(
      PinnedPod("l4", 4,
                RequiredAffinity(
                    R"({"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-L4"]})")));
  ledger.UpsertPod(PinnedPod("free", 1, R"("nodeSelector":{})"));
  using Shapes = std::vector<std::pair<int32_t, std::vector<std::string>>>;
  EXPECT_EQ(Pinned(*ledger.BuildSnapshot()), (Shapes{{1, {}}}));
  AddMixedNodes(ledger);
  EXPECT_EQ(Pinned(*ledger.BuildSnapshot()), (Shapes{{1, {}}, {4, {"NVIDIA-L4"}}}));
}

}  // namespace
}  // namespace gpusched::cluster_ledger_test

namespace gpusched::cluster_ledger_test {
namespace {

// A publication reuses what did not change: the name index while the names stay, and each node's
// content hashes until it changes. Its classes and lookups must be those of a snapshot built from
// scratch of the same nodes.
TEST(ClusterLedger, a_snapshot_reuses_the_name_index_and_hashes_of_what_did_not_change) {
  ClusterLedger ledger{GpuResourceNames()};
  for (const char* name : {"n1", "n2", "n3"}) ledger.UpsertNode(GpuNode(name, 8));
  auto first = ledger.BuildSnapshot();
  ledger.UpsertPod(BoundPod("a", "n2", 2));
  auto second = ledger.BuildSnapshot();
  EXPECT_EQ(second->shared_index(), first->shared_index());
  // Per node: its content class and GPU class.
  auto classes_of = [](const ClusterSnapshot& s) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (uint32_t c : s.classes()) out.emplace_back(c, s.GpuClassOf(c));
    return out;
  };
  auto same_as_fresh = [&](const ClusterSnapshot& s) {
    ClusterSnapshot fresh({s.nodes().begin(), s.nodes().end()}, s.generation());
    EXPECT_EQ(classes_of(s), classes_of(fresh));
    EXPECT_EQ(s.gpu_class_count(), fresh.gpu_class_count());
    for (const auto& node : s.nodes()) EXPECT_EQ(s.Find(node->info.name), node.get());
  };
  same_as_fresh(*second);
  EXPECT_EQ(second->class_count(), 2u);  // n1 and n3 alike, n2 holding a pod
  EXPECT_EQ(Used(*second, "n2"), 2);

  ledger.UpsertNode(GpuNode("n0", 4));
  auto third = ledger.BuildSnapshot();
  EXPECT_NE(third->shared_index(), second->shared_index());
  ASSERT_NE(third->Find("n0"), nullptr);
  EXPECT_EQ(third->Find("n2")->info.name, "n2");
  same_as_fresh(*third);

  ledger.DeleteNode("n1");
  auto fourth = ledger.BuildSnapshot();
  EXPECT_EQ(fourth->IndexOf("n1"), NodeIndex::kAbsent);
  EXPECT_EQ(fourth->Find("n3")->info.name, "n3");
  same_as_fresh(*fourth);
}

// ExpireAssumptions skips its pass until the earliest assumption can have expired; an assumption
// that ended early (its bind seen) must not keep a later one from expiring on time.
TEST(ClusterLedger, assumptions_expire_on_time_when_an_earlier_one_ended_first) {
  using Clock = ClusterLedger::Clock;
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertPod(BoundPod("early", "", 1, PodPhase::kPending));
  ledger.UpsertPod(BoundPod("late", "", 1, PodPhase::kPending));
  Clock::time_point t0 = Clock::now();
  using std::chrono::seconds;
  EXPECT_EQ(ledger.Assume("uid-early", "n1", t0, seconds(5)),
            ClusterLedger::AssumeResult::kApplied);
  EXPECT_EQ(ledger.Assume("uid-late", "n1", t0, seconds(20)),
            ClusterLedger::AssumeResult::kApplied);
  ledger.UpsertPod(BoundPod("early", "n1", 1));  // its bind, seen
  EXPECT_EQ(ledger.ExpireAssumptions(t0 + seconds(6)), 0u);
  EXPECT_EQ(ledger.assumed_count(), 1u);
  EXPECT_EQ(ledger.ExpireAssumptions(t0 + seconds(19)), 0u);
  EXPECT_EQ(ledger.ExpireAssumptions(t0 + seconds(21)), 1u);
  EXPECT_EQ(ledger.assumed_count(), 0u);
  EXPECT_EQ(Used(*ledger.BuildSnapshot(), "n1"), 1);  // the bound one alone
}

// A publication hands on the assumptions made when their pods were assumed, not copies: the same
// objects in every snapshot while they stand, found by key among many, and gone once the bind is
// seen.
TEST(ClusterLedger, snapshots_share_each_assumption_made_once) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  ledger.UpsertNode(GpuNode("n2", 8));
  const auto now = ClusterLedger::Clock::now();
  for (int i = 0; i < 12; ++i) {
    std::string name = "p" + std::to_string(i);
    ledger.UpsertPod(BoundPod(name, "", 1, PodPhase::kPending));
    ASSERT_EQ(ledger.Assume("uid-" + name, i % 2 ? "n1" : "n2", now, std::chrono::seconds(30)),
              ClusterLedger::AssumeResult::kApplied);
  }
  auto first = ledger.BuildSnapshot();
  ledger.UpsertNode(GpuNode("n3", 8));
  auto second = ledger.BuildSnapshot();
  for (int i = 0; i < 12; ++i) {
    std::string key = "uid-p" + std::to_string(i);
    const Assumption* a = first->AssumptionOf(key);
    ASSERT_NE(a, nullptr) << key;
    EXPECT_EQ(a->pod_key, key);
    EXPECT_EQ(a->node, i % 2 ? "n1" : "n2");
    EXPECT_EQ(second->AssumptionOf(key), a) << key;
  }
  EXPECT_EQ(first->AssumptionOf("uid-p12"), nullptr);
  EXPECT_EQ(first->AssumptionOf("uid-p"), nullptr);
  ledger.UpsertPod(BoundPod("p3", "n1", 1));  // its bind, seen
  auto third = ledger.BuildSnapshot();
  EXPECT_EQ(third->AssumptionOf("uid-p3"), nullptr);
  EXPECT_EQ(third->AssumptionOf("uid-p4"), second->AssumptionOf("uid-p4"));
  EXPECT_EQ(Used(*third, "n1"), 6);
}

// The standard workload is kept from one publication to the next, and made again once a node's
// allocatable changes, a node comes or one goes.
TEST(ClusterLedger, the_standard_workload_follows_the_node_sizes) {
  auto largest = [](const ClusterSnapshot& s) {
    int32_t most = 0;
    for (const WeightedShape& w : s.standard_workload()) most = std::max(most, w.shape.num_gpu);
    return most;
  };
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(GpuNode("n1", 8));
  EXPECT_EQ(largest(*ledger.BuildSnapshot()), 8);
  ledger.UpsertPod(BoundPod("p", "n1", 1));
  EXPECT_EQ(largest(*ledger.BuildSnapshot()), 8);
  ledger.UpsertNode(GpuNode("n1", 2));
  EXPECT_EQ(largest(*ledger.BuildSnapshot()), 2);
  ledger.UpsertNode(GpuNode("n2", 4));
  EXPECT_EQ(largest(*ledger.BuildSnapshot()), 4);
  ledger.DeleteNode("n2");
  EXPECT_EQ(largest(*ledger.BuildSnapshot()), 2);
}

// The sums of the ledger's next snapshot are those of summing its nodes in one pass.
void ExpectSumsAsOnePass(ClusterLedger& ledger, const char* step) {
  auto snapshot = ledger.BuildSnapshot();
  NodeTotalsSummary once = NodeTotals::Of(snapshot->nodes());
  EXPECT_EQ(snapshot->offered_resources(), once.offered_resources) << step;
  EXPECT_EQ(snapshot->gpus_by_product(), once.gpus_by_product) << step;
  EXPECT_EQ(snapshot->free_gpu_milli_by_product(), once.free_gpu_milli_by_product) << step;
}

// The sums a snapshot answers (resources offered, GPUs and free GPUs per product) are kept by the
// ledger as nodes change, not summed over every node per publication; through nodes coming,
// changing product and size, filling, emptying and going, they equal the sums made in one pass.
TEST(ClusterLedger, the_sums_over_the_nodes_follow_every_change) {
  ClusterLedger ledger{GpuResourceNames()};
  auto node = [](const std::string& name, int64_t gpus, const std::string& product, bool with_mig) {
    NodeInfo n = GpuNode(name, gpus);
    n.gpu.product = product;
    n.allocatable.Set("cpu", 8000);
    if (with_mig) n.allocatable.Set("nvidia.com/mig-1g.10gb", Units(7));
    return n;
  };
  ledger.UpsertNode(node("a", 8, "A100", false));
  ledger.UpsertNode(node("b", 4, "H100", true));
  ledger.UpsertNode(node("c", 0, "", false));
  ExpectSumsAsOnePass(ledger, "three nodes");
  EXPECT_EQ(ledger.BuildSnapshot()->gpus_by_product().at("A100"), 8);
  ledger.UpsertPod(BoundPod("p1", "a", 3));
  ledger.UpsertPod(BoundPod("p2", "b", 4));
  ExpectSumsAsOnePass(ledger, "pods bound");
  EXPECT_EQ(ledger.BuildSnapshot()->free_gpu_milli_by_product().at("H100"), 0);
  ledger.UpsertNode(node("a", 2, "H100", false));  // re-labelled and shrunk: over-committed
  ExpectSumsAsOnePass(ledger, "a node changed product and size");
  EXPECT_EQ(ledger.BuildSnapshot()->gpus_by_product().count("A100"), 0u);
  ledger.DeletePod(PodKey(BoundPod("p2", "b", 4)));
  ledger.DeleteNode("b");
  ExpectSumsAsOnePass(ledger, "a pod and a node gone");
  EXPECT_EQ(ledger.BuildSnapshot()->offered_resources(),
            (std::vector<std::string>{"cpu", "nvidia.com/gpu"}));
  ledger.DeleteNode("a");
  ledger.DeleteNode("c");
  ExpectSumsAsOnePass(ledger, "every node gone");
  EXPECT_TRUE(ledger.BuildSnapshot()->gpus_by_product().empty());
}

// Whether `a` and `b` group positions alike: equal numbers in one where, and only where, the
// other has equal numbers.
bool SamePartition(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.size() != b.size()) return false;
  std::map<uint32_t, uint32_t> a_to_b;
  std::map<uint32_t, uint32_t> b_to_a;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a_to_b.try_emplace(a[i], b[i]).first->second != b[i]) return false;
    if (b_to_a.try_emplace(b[i], a[i]).first->second != a[i]) return false;
  }
  return true;
}

std::vector<uint32_t> GpuClassesOf(const ClusterSnapshot& s) {
  std::vector<uint32_t> out;
  for (uint32_t c : s.classes()) out.push_back(s.GpuClassOf(c));
  return out;
}

// The ledger keeps its content classes across snapshots and renumbers only the nodes that changed:
// through binds, assumptions, deletions and nodes coming and going, every snapshot groups its
// nodes exactly as numbering them afresh does, and empty classes do not pile up.
TEST(ClusterLedger, kept_content_classes_group_nodes_as_fresh_ones_do) {
  ClusterLedger ledger{GpuResourceNames()};
  std::mt19937 random(7);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const auto now = std::chrono::steady_clock::now();
  auto node = [](int i) {
    NodeInfo n = GpuNode("node-" + std::to_string(i), 8);
    n.allocatable.Set("cpu", 64000);
    return n;
  };
  for (int i = 0; i < 300; ++i) ledger.UpsertNode(node(i));
  int pods = 0;
  for (int round = 0; round < 1500; ++round) {
    const int step = pick(10);
    if (step < 5) {  // a pod bound, as a watch reports it; later ones each of its own CPU size
      PodInfo bound =
          BoundPod("p" + std::to_string(pods), "node-" + std::to_string(pick(300)), 1 + pick(2));
      if (round >= 300) bound.requests.Set("cpu", 100 + pods);
      ++pods;
      ledger.UpsertPod(bound);
    } else if (step < 8) {  // a pod assumed on a node, then a pending one
      PodInfo pending = BoundPod("p" + std::to_string(pods++), "", 1);
      ledger.UpsertPod(pending);
      ledger.Assume(PodKey(pending), "node-" + std::to_string(pick(300)), now,
                    std::chrono::hours(1));
    } else if (step == 8 || round >= 300) {  // later rounds keep the names: no fresh start
      ledger.DeletePod(PodKey(BoundPod("p" + std::to_string(pick(pods)), "", 1)));
    } else {  // a node goes or comes back
      const int i = pick(300);
      if (pick(2) == 0) {
        ledger.DeleteNode("node-" + std::to_string(i));
      } else {
        ledger.UpsertNode(node(i));
      }
    }
    auto kept = ledger.BuildSnapshot();
    std::vector<ClusterSnapshot::NodePtr> nodes(kept->nodes().begin(), kept->nodes().end());
    ClusterSnapshot fresh(nodes, 0);
    ASSERT_TRUE(SamePartition(kept->classes(), fresh.classes())) << "round " << round;
    ASSERT_TRUE(SamePartition(GpuClassesOf(*kept), GpuClassesOf(fresh))) << "round " << round;
    // Empty classes stay under 64 and a quarter of the live ones (a publication's few over).
    EXPECT_LE(kept->class_count(), fresh.class_count() * 5 / 4 + 64 + 4) << "round " << round;
  }
}

// A node may advertise any amount (the API server's word): sums of the largest amounts saturate as
// the one-pass sums do, and taking such a node away undoes exactly what it added.
TEST(ClusterLedger, the_sums_over_the_nodes_hold_at_the_largest_amounts) {
  ClusterLedger ledger{GpuResourceNames()};
  auto huge = [](const std::string& name) {
    NodeInfo n = GpuNode(name, 1);
    n.gpu.product = "A100";
    n.allocatable.Set("nvidia.com/gpu", std::numeric_limits<int64_t>::max());
    return n;
  };
  for (int i = 0; i < 3; ++i) ledger.UpsertNode(huge("huge-" + std::to_string(i)));
  ledger.UpsertNode(GpuNode("small", 8));
  ExpectSumsAsOnePass(ledger, "three huge nodes and a small one");
  EXPECT_EQ(ledger.BuildSnapshot()->free_gpu_milli_by_product().at(""), Units(8));
  EXPECT_EQ(ledger.BuildSnapshot()->free_gpu_milli_by_product().at("A100"),
            std::numeric_limits<int64_t>::max());
  ledger.DeleteNode("huge-0");
  ledger.DeleteNode("huge-1");
  ExpectSumsAsOnePass(ledger, "one huge node left");
  ledger.DeleteNode("huge-2");
  ExpectSumsAsOnePass(ledger, "none left");
  EXPECT_EQ(ledger.BuildSnapshot()->gpus_by_product().count("A100"), 0u);
}

}  // namespace
}  // namespace gpusched::cluster_ledger_test
