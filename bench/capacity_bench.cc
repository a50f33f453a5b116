// capacity_bench: the planning reports over clusters whose nodes each form a content class of
// their own (issue #37: they cost seconds to minutes when a placement judged every node):
// ComputeCapacity and ComputeWhyPending at 1,000, 5,000 and 10,000 nodes (Google Benchmark).
//
//   build/bench/capacity_bench [--benchmark_filter=...]
//
// The cluster: 8-GPU H100 and A100-80GB nodes and 4-GPU V100s in turn, each with a CPU amount of
// its own, node i using i mod (GPUs + 1) GPUs; 200 pending pods of 4, 8 and 16 GPUs.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/why_pending.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace {

using namespace gpusched;

const char* const kProducts[] = {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB",
                                 "Tesla-V100-SXM2-16GB"};

std::shared_ptr<const ClusterSnapshot> MakeCluster(int nodes) {
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  for (int i = 0; i < nodes; ++i) {
    const int64_t gpus = i % 3 == 2 ? 4 : 8;
    const std::string name = "gpu-" + std::to_string(i);
    NodeState node =
        testing::LabeledNode(name, gpus, {{"nvidia.com/gpu.product", kProducts[i % 3]}});
    node.info.allocatable.Set("cpu", testing::Units(96 + i));
    ledger.UpsertNode(node.info);
    if (int64_t used = i % (gpus + 1); used > 0) {
      PodInfo pod = testing::MakePod("run-" + std::to_string(i),
                                     ResourceList{{"nvidia.com/gpu", testing::Units(used)}});
      pod.node_name = name;
      pod.phase = PodPhase::kRunning;
      ledger.UpsertPod(pod);
    }
  }
  for (int j = 0; j < 200; ++j) {
    ledger.UpsertPod(
        testing::MakePod("wait-" + std::to_string(j),
                         ResourceList{{"nvidia.com/gpu", testing::Units(int64_t{4} << (j % 3))}}));
  }
  return ledger.BuildSnapshot();
}

const ClusterSnapshot& Cluster(int nodes) {
  static std::map<int, std::shared_ptr<const ClusterSnapshot>> built;
  auto& s = built[nodes];
  if (!s) s = MakeCluster(nodes);
  return *s;
}

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

void BM_Capacity(benchmark::State& state) {
  const ClusterSnapshot& snapshot = Cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ComputeCapacity(DefaultPolicy(), snapshot));
}
BENCHMARK(BM_Capacity)->Arg(1000)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_WhyPending(benchmark::State& state) {
  const ClusterSnapshot& snapshot = Cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ComputeWhyPending(DefaultPolicy(), snapshot));
}
BENCHMARK(BM_WhyPending)->Arg(1000)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
