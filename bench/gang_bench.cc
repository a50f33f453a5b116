// gang_bench: what gang-topology adds to one filter + prioritize pair (issue #47), on clusters of
// 1,000 and 5,000 8-GPU nodes in racks of 32 and zones of 1,024 (Topograph's leaf and EKS's zone
// labels), a quarter of their GPUs in use (Google Benchmark):
//
//   build/bench/gang_bench [--benchmark_filter=...]
//
// - Plain: an 8-GPU pod outside any job, no hold standing: the baseline, in the same run.
// - JobMember: a pod of a 16-pod job whose 4 siblings are bound in one rack.
// - PlainBesideHolds: the plain pod while 16 partly placed jobs hold their racks.
// - TopologyIndexBuild: the nodes' domains, built once per snapshot on its first gang cycle (the
//   other cases reuse their snapshot's, as the requests between two publications do).
// Each iteration opens a cycle (the plugins' Prepare) and runs Filter and Prioritize over every
// node by content class, as the extender service does.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/topology_index.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/topology.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace {

using namespace gpusched;

constexpr int kRackNodes = 32;
constexpr int kZoneNodes = 1024;

PodInfo JobPod(const std::string& name, const std::string& job, int size, const std::string& node) {
  PodInfo p = testing::MakePod(
      name, ResourceList{{"nvidia.com/gpu", testing::Units(8)}, {"cpu", testing::Units(8)}});
  p.namespace_name = "ml";
  p.uid = "uid-" + name;
  p.node_name = node;
  p.phase = node.empty() ? PodPhase::kPending : PodPhase::kRunning;
  if (!job.empty()) {
    p.annotations = {{"gpusched.io/group", job}, {"gpusched.io/group-size", std::to_string(size)}};
    p.group = ReadPodGroup(p.namespace_name, p.labels, p.annotations, p.spec_group);
  }
  return p;
}

// `nodes` nodes; every fourth node's GPUs in use; `holds` jobs of 16 with 4 pods bound in racks of
// their own (0..holds-1), and the job "member" with 4 pods bound in the last rack.
std::shared_ptr<const ClusterSnapshot> MakeCluster(int nodes, int holds, ClusterLedger& ledger) {
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "h100-" + std::to_string(i);
    NodeState node = testing::LabeledNode(name, 8, {{"nvidia.com/gpu.product", "NVIDIA-H100"}});
    node.info.allocatable.Set("cpu", testing::Units(192));
    node.info.allocatable.Set("pods", testing::Units(110));
    node.info.topology = PinLabels::Keep(
        {{"network.topology.nvidia.com/leaf", "leaf-" + std::to_string(i / kRackNodes)},
         {"topology.kubernetes.io/zone", "zone-" + std::to_string(i / kZoneNodes)}},
        IsTopologyLabel);
    ledger.UpsertNode(node.info);
    if (i % 4 == 3) ledger.UpsertPod(JobPod("busy-" + std::to_string(i), "", 0, name));
  }
  auto bind_job = [&](const std::string& job, int rack) {
    for (int k = 0; k < 4; ++k) {
      const int node = rack * kRackNodes + k;
      ledger.UpsertPod(
          JobPod(job + "-" + std::to_string(k), job, 16, "h100-" + std::to_string(node)));
    }
  };
  for (int h = 0; h < holds; ++h) bind_job("held-" + std::to_string(h), h);
  bind_job("member", nodes / kRackNodes - 1);
  return ledger.BuildSnapshot();
}

void Judge(benchmark::State& state, const PodInfo& pod, const ClusterSnapshot& snapshot) {
  static const Policy policy(DefaultPolicySpec());
  std::vector<const NodeState*> nodes;
  std::vector<std::string_view> names;
  for (const auto& n : snapshot.nodes()) {
    nodes.push_back(n.get());
    names.push_back(n->info.name);
  }
  Candidates candidates{nodes, snapshot.classes(), snapshot.class_count(), names, {}};
  for (auto _ : state) {
    auto judged = policy.Judge(pod, snapshot);
    auto verdicts = judged.engine().Filter(*judged.cycle, candidates);
    auto scores = judged.engine().Prioritize(*judged.cycle, candidates);
    benchmark::DoNotOptimize(verdicts.data());
    benchmark::DoNotOptimize(scores.data());
  }
}

void Plain(benchmark::State& state) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  auto snapshot = MakeCluster(static_cast<int>(state.range(0)), 0, ledger);
  Judge(state, JobPod("solo", "", 0, ""), *snapshot);
}

void JobMember(benchmark::State& state) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  auto snapshot = MakeCluster(static_cast<int>(state.range(0)), 0, ledger);
  Judge(state, JobPod("member-9", "member", 16, ""), *snapshot);
}

void PlainBesideHolds(benchmark::State& state) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  auto snapshot = MakeCluster(static_cast<int>(state.range(0)), 16, ledger);
  Judge(state, JobPod("solo", "", 0, ""), *snapshot);
}

// What a snapshot pays once, on the first gang-topology cycle: its nodes' domains at the default
// levels (cluster/topology_index.h).
void TopologyIndexBuild(benchmark::State& state) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  auto snapshot = MakeCluster(static_cast<int>(state.range(0)), 0, ledger);
  for (auto _ : state) {
    TopologyIndex index(DefaultTopologyLevels(), snapshot->nodes());
    benchmark::DoNotOptimize(index.count(0));
  }
}

BENCHMARK(Plain)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(JobMember)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(PlainBesideHolds)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(TopologyIndexBuild)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
