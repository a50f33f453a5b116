// codec_bench: microbenchmarks of the request path's parts (Google Benchmark), production codec
// next to the nlohmann DOM baseline, on the 5,000-node synthetic workload.
//
//   build/bench/codec_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "baseline_codec.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy.h"
#include "workload.h"

namespace {

using namespace gpusched;

const bench::Workload& Load() {
  static const bench::Workload w = bench::MakeWorkload(5000, 0.5);
  return w;
}

void BM_DecodeNodeNames(benchmark::State& state) {
  const auto& w = Load();
  for (auto _ : state) benchmark::DoNotOptimize(DecodeExtenderArgs(w.names_request));
  state.SetBytesProcessed(state.iterations() * w.names_request.size());
}
BENCHMARK(BM_DecodeNodeNames)->Unit(benchmark::kMicrosecond);

void BM_DecodeNodeNamesBaseline(benchmark::State& state) {
  const auto& w = Load();
  for (auto _ : state) benchmark::DoNotOptimize(baseline::DecodeExtenderArgs(w.names_request));
  state.SetBytesProcessed(state.iterations() * w.names_request.size());
}
BENCHMARK(BM_DecodeNodeNamesBaseline)->Unit(benchmark::kMicrosecond);

void BM_DecodeFullNodes(benchmark::State& state) {
  const auto& w = Load();
  for (auto _ : state) benchmark::DoNotOptimize(DecodeExtenderArgs(w.nodes_request));
  state.SetBytesProcessed(state.iterations() * w.nodes_request.size());
}
BENCHMARK(BM_DecodeFullNodes)->Unit(benchmark::kMillisecond);

void BM_DecodeFullNodesBaseline(benchmark::State& state) {
  const auto& w = Load();
  for (auto _ : state) benchmark::DoNotOptimize(baseline::DecodeExtenderArgs(w.nodes_request));
  state.SetBytesProcessed(state.iterations() * w.nodes_request.size());
}
BENCHMARK(BM_DecodeFullNodesBaseline)->Unit(benchmark::kMillisecond);

// The default policy (fgd + consolidate), or with range(0) == 1 the MostAllocated policy that was
// the default before: the cost of fragmentation-aware scoring, measured in the same run.
PolicySpec BenchPolicy(int64_t which) {
  PolicySpec spec = DefaultPolicySpec();
  if (which == 1) {
    auto& plugins = spec.profiles[0].plugins;
    plugins["gpu-binpack"] = {true, 1};
    plugins["fgd"].enabled = false;
    plugins["consolidate"].enabled = false;
  }
  return spec;
}

// Engine work per node: filter and prioritize for every node name, no decoding or encoding.
void BM_EngineFilterAndScore(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(BenchPolicy(state.range(0))));
  ExtenderService service(snapshots, policies);
  ExtenderArgs args = DecodeExtenderArgs(w.names_request);
  for (auto _ : state) {
    benchmark::DoNotOptimize(service.Filter(args));
    benchmark::DoNotOptimize(service.Prioritize(args));
  }
  state.SetItemsProcessed(state.iterations() * args.node_names->size());
}
BENCHMARK(BM_EngineFilterAndScore)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_EncodeFilterResult(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
  ExtenderService service(snapshots, policies);
  ExtenderFilterResult result = service.Filter(DecodeExtenderArgs(w.names_request));
  for (auto _ : state) benchmark::DoNotOptimize(EncodeExtenderFilterResult(result));
}
BENCHMARK(BM_EncodeFilterResult)->Unit(benchmark::kMicrosecond);

void BM_EncodeFilterResultBaseline(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
  ExtenderService service(snapshots, policies);
  ExtenderFilterResult result = service.Filter(DecodeExtenderArgs(w.names_request));
  for (auto _ : state) benchmark::DoNotOptimize(baseline::EncodeExtenderFilterResult(result));
}
BENCHMARK(BM_EncodeFilterResultBaseline)->Unit(benchmark::kMicrosecond);

void BM_EncodeHostPriorityList(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
  ExtenderService service(snapshots, policies);
  ExtenderArgs args = DecodeExtenderArgs(w.names_request);
  HostPriorityList list = service.Prioritize(args);
  for (auto _ : state) benchmark::DoNotOptimize(EncodeHostPriorityList(list));
}
BENCHMARK(BM_EncodeHostPriorityList)->Unit(benchmark::kMicrosecond);

void BM_EncodeHostPriorityListBaseline(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
  ExtenderService service(snapshots, policies);
  ExtenderArgs args = DecodeExtenderArgs(w.names_request);
  HostPriorityList list = service.Prioritize(args);
  for (auto _ : state) benchmark::DoNotOptimize(baseline::EncodeHostPriorityList(list));
}
BENCHMARK(BM_EncodeHostPriorityListBaseline)->Unit(benchmark::kMicrosecond);

// The whole handler for one filter + prioritize pair on 5,000 names, as `serve` runs it (metrics
// counted): decode, engine, encode, twice. No HTTP.
void BM_HandlerPair(benchmark::State& state) {
  const auto& w = Load();
  Published<ClusterSnapshot> snapshots(w.snapshot);
  Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
  Metrics metrics([&] {
    MetricsState m;
    m.snapshot = snapshots.Get();
    return m;
  });
  ExtenderService service(snapshots, policies, &metrics);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        EncodeExtenderFilterResult(service.Filter(DecodeExtenderArgs(w.names_request))));
    benchmark::DoNotOptimize(
        EncodeHostPriorityList(service.Prioritize(DecodeExtenderArgs(w.names_request))));
  }
}
BENCHMARK(BM_HandlerPair)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
