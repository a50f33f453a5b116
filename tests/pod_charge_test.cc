// One rule for what a pod holds of its node (issue #50): the four places that charged pods (the
// live inventory's ledger, the extender's assumptions, the simulator, planning's what-ifs) charge
// through model/pod_charge.h and agree on pods that used to set them apart: pods asking for no
// GPU, shares, a DRA claim, terminal pods.
#include "gpusched/model/pod_charge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/dra/dra_claims.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/sim/simulator.h"
#include "testing/dra_fixtures.h"
#include "testing/test_support.h"

namespace gpusched::pod_charge_test {
namespace {

using testing::Units;

constexpr int64_t kGiB = int64_t{1} << 30;

// The node every path charges: 8 whole GPUs and 16 time-sliced replicas.
TraceNode Node() {
  TraceNode t;
  t.name = "n1";
  t.cpu_milli = 64000;
  t.memory_mib = 512 * 1024;
  t.gpus = 8;
  t.model = "NVIDIA-A100-SXM4-80GB";
  t.resources = {{"nvidia.com/gpu.shared", 16}};
  return t;
}

PodInfo Pod(const std::string& name, ResourceList requests, PodPhase phase = PodPhase::kRunning) {
  PodInfo p = testing::MakePod(name, std::move(requests));
  p.node_name = "n1";
  p.phase = phase;
  return p;
}

// The pods as the watch reports them, bound to n1.
std::vector<PodInfo> Watched() {
  PodInfo claim = testing::dra::ClaimPod("claim", "one");
  claim.node_name = "n1";
  claim.phase = PodPhase::kRunning;
  return {
      Pod("cpu-only", {{"cpu", 2000}, {"memory", 4 * kGiB * 1000}, {"ephemeral-storage", 1000}}),
      Pod("whole", {{"cpu", 4000}, {"memory", 16 * kGiB * 1000}, {"nvidia.com/gpu", Units(2)}}),
      Pod("share", {{"cpu", 1000}, {"nvidia.com/gpu", 500}}),
      Pod("time-sliced", {{"cpu", 1000}, {"nvidia.com/gpu.shared", Units(1)}}),
      claim,
      Pod("succeeded", {{"cpu", 8000}, {"nvidia.com/gpu", Units(4)}}, PodPhase::kSucceeded),
      Pod("failed", {{"cpu", 8000}, {"memory", kGiB * 1000}}, PodPhase::kFailed),
  };
}

// A ledger that knows n1 and the DRA objects the claim pod's claim names (a GPU class, a slice of
// another node that gives the GPU kind).
void Prepare(ClusterLedger& ledger) {
  ledger.UpsertNode(TraceNodeState(Node()).info);
  ledger.dra().Upsert(testing::dra::Slice("dra-1", testing::dra::Gpus(8)));
  ledger.dra().Upsert(testing::dra::GpuClass());
  ledger.dra().Upsert(testing::dra::Claim("one", 1));
}

// The pods as every reader past the ledger sees them: a claim's demand in its requests (the
// ledger's GPU pod list, the simulator's DRA mode).
std::vector<PodInfo> AsJudged(const ClusterLedger& ledger) {
  std::vector<PodInfo> out;
  for (const PodInfo& p : Watched()) {
    out.push_back(p.claims.empty()
                      ? p
                      : WithDraDemand(p, DraDemandOf(p, ledger.dra(), DraDemandScope::kAsked)));
  }
  return out;
}

struct Usage {
  ResourceList used;
  int32_t pods = 0;
  int32_t gpu_pods = 0;
  bool operator==(const Usage&) const = default;
};
Usage UsageOf(const NodeState& n) { return {n.used, n.pod_count, n.gpu_pod_count}; }
void PrintTo(const Usage& u, std::ostream* os) {
  *os << "{" << FormatResourceList(u.used) << "; pods " << u.pods << ", GPU pods " << u.gpu_pods
      << "}";
}

Usage Live(const std::vector<PodInfo>& pods) {
  ClusterLedger ledger{GpuResourceNames()};
  Prepare(ledger);
  for (const PodInfo& p : pods) ledger.UpsertPod(p);
  return UsageOf(*ledger.BuildSnapshot()->Find("n1"));
}

TEST(PodCharge, the_four_charging_paths_agree) {
  ClusterLedger dra_view{GpuResourceNames()};
  Prepare(dra_view);
  const std::vector<PodInfo> judged = AsJudged(dra_view);

  // The live inventory: the watch reports every pod bound.
  const Usage live = Live(Watched());
  const Usage expected{{{"cpu", 9000},
                        {"memory", 20 * kGiB * 1000},
                        {"nvidia.com/gpu", 3500},
                        {"nvidia.com/gpu.shared", Units(1)}},
                       5,
                       4};
  EXPECT_EQ(live, expected);

  // Assumptions: the GPU pods pending and assumed on n1, the others bound.
  ClusterLedger assuming{GpuResourceNames()};
  Prepare(assuming);
  const auto now = ClusterLedger::Clock::now();
  for (PodInfo p : Watched()) {
    const bool assumable =
        !p.terminal() && (p.requests.milli("nvidia.com/gpu") > 0 ||
                          p.requests.milli("nvidia.com/gpu.shared") > 0 || !p.claims.empty());
    if (!assumable) {
      assuming.UpsertPod(p);
      continue;
    }
    p.node_name.clear();
    p.phase = PodPhase::kPending;
    assuming.UpsertPod(p);
    ASSERT_EQ(assuming.Assume(PodKey(p), "n1", now, std::chrono::minutes(1)),
              ClusterLedger::AssumeResult::kApplied)
        << p.name;
  }
  auto assumed = assuming.BuildSnapshot();
  EXPECT_EQ(assuming.assumed_count(), 4u);
  EXPECT_EQ(UsageOf(*assumed->Find("n1")), live);

  // The simulator: each pod committed to the run's node.
  NodeState simulated = TraceNodeState(Node());
  std::vector<int32_t> shares(8, 1000);
  for (const PodInfo& p : judged) CommitPod(simulated, shares, p, ShapeOf(p), {});
  EXPECT_EQ(UsageOf(simulated), live);

  // Planning: each pod charged to the working copy of the bare node; then taken back.
  auto bare = testing::SnapshotOf({TraceNodeState(Node())});
  WorkingNodes working(*bare);
  for (const PodInfo& p : judged) ChargePod(working.Mutable(0), ChargeOf(p, GpuResourceNames()));
  EXPECT_EQ(UsageOf(working.node(0)), live);
  for (const PodInfo& p : judged) UnchargePod(working.Mutable(0), ChargeOf(p, GpuResourceNames()));
  EXPECT_EQ(UsageOf(working.node(0)), Usage{});
}

// What the extender judges a pod against when it is judged again: its node less its own
// assumption, the node as the live inventory has it without the pod.
TEST(PodCharge, a_node_less_an_assumption_is_the_node_without_the_pod) {
  for (const PodInfo& own : Watched()) {
    if (own.terminal() || (own.claims.empty() && own.requests.milli("nvidia.com/gpu") == 0 &&
                           own.requests.milli("nvidia.com/gpu.shared") == 0)) {
      continue;
    }
    ClusterLedger ledger{GpuResourceNames()};
    Prepare(ledger);
    std::vector<PodInfo> others;
    for (PodInfo p : Watched()) {
      if (p.name == own.name) {
        p.node_name.clear();
        p.phase = PodPhase::kPending;
        ledger.UpsertPod(p);
        ASSERT_EQ(
            ledger.Assume(PodKey(p), "n1", ClusterLedger::Clock::now(), std::chrono::minutes(1)),
            ClusterLedger::AssumeResult::kApplied);
        continue;
      }
      ledger.UpsertPod(p);
      others.push_back(p);
    }
    auto snapshot = ledger.BuildSnapshot();
    const Assumption* assumption = snapshot->AssumptionOf(PodKey(own));
    ASSERT_NE(assumption, nullptr) << own.name;
    // Names mode: the snapshot's node; full-Nodes mode: the request's node, usage copied.
    NodeState names_mode = *snapshot->Find("n1");
    CopyUsageWithout(*snapshot->Find("n1"), assumption, names_mode);
    NodeState full_nodes_mode;
    full_nodes_mode.info.name = "n1";
    CopyUsageWithout(*snapshot->Find("n1"), assumption, full_nodes_mode);
    EXPECT_EQ(UsageOf(names_mode), Live(others)) << own.name;
    EXPECT_EQ(UsageOf(full_nodes_mode), Live(others)) << own.name;
  }
}

// The simulator and the live inventory fed the same trace objects see the same node.
TEST(PodCharge, the_simulator_and_the_live_inventory_see_the_same_node) {
  auto pod = [](std::string name, int64_t cpu_milli, int64_t memory_mib, int32_t gpus,
                int64_t gpu_milli, ExtraResources resources = {}) {
    TracePod t;
    t.name = std::move(name);
    t.cpu_milli = cpu_milli;
    t.memory_mib = memory_mib;
    t.num_gpu = gpus;
    t.gpu_milli = gpu_milli;
    t.resources = std::move(resources);
    return t;
  };
  const std::vector<TracePod> trace = {
      pod("cpu", 2000, 1024, 0, 0), pod("two", 4000, 8192, 2, 1000),
      pod("half", 1000, 2048, 1, 500),
      pod("sliced", 1000, 0, 0, 0, {{"nvidia.com/gpu.shared", 2}})};
  NodeState simulated = TraceNodeState(Node());
  std::vector<int32_t> shares(8, 1000);
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(TraceNodeState(Node()).info);
  for (const TracePod& t : trace) {
    PodInfo pod = TracePodInfo(t);
    CommitPod(simulated, shares, pod, ShapeOf(pod), {});
    pod.node_name = "n1";
    pod.phase = PodPhase::kRunning;
    ledger.UpsertPod(pod);
  }
  const NodeState& live = *ledger.BuildSnapshot()->Find("n1");
  EXPECT_EQ(live.info.allocatable, simulated.info.allocatable);
  EXPECT_EQ(UsageOf(live), UsageOf(simulated));
  EXPECT_EQ(UsageOf(live), (Usage{{{"cpu", 8000},
                                   {"memory", int64_t{11264} * kBytesPerMib * 1000},
                                   {"nvidia.com/gpu", 2500},
                                   {"nvidia.com/gpu.shared", Units(2)}},
                                  4,
                                  3}));
}

TEST(PodCharge, terminal_pods_hold_nothing_and_uncharging_stops_at_zero) {
  PodInfo done = Pod("done", {{"cpu", 1000}, {"nvidia.com/gpu", Units(1)}}, PodPhase::kSucceeded);
  EXPECT_FALSE(ChargeOf(done, GpuResourceNames()).holds);
  NodeState node = TraceNodeState(Node());
  ChargePod(node, ChargeOf(done, GpuResourceNames()));
  EXPECT_EQ(UsageOf(node), Usage{});
  // The policy's extra names make a GPU pod.
  PodInfo extra = Pod("extra", {{"cpu", 1000}, {"example.com/gpu", Units(1)}});
  EXPECT_FALSE(ChargeOf(extra, GpuResourceNames()).gpu_pod);
  EXPECT_EQ(ChargeOf(extra, GpuResourceNames()).requests, (ResourceList{{"cpu", 1000}}));
  const PodCharge charge = ChargeOf(extra, GpuResourceNames({"example.com/gpu"}));
  EXPECT_TRUE(charge.gpu_pod);
  UnchargePod(node, charge);
  EXPECT_EQ(UsageOf(node), Usage{});
  ChargePod(node, charge);
  EXPECT_EQ(UsageOf(node), (Usage{{{"cpu", 1000}, {"example.com/gpu", Units(1)}}, 1, 1}));
}

}  // namespace
}  // namespace gpusched::pod_charge_test
