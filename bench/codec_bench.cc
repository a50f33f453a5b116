// codec_bench: microbenchmarks of the request path's parts (Google Benchmark), production codec
// next to the nlohmann DOM baseline, on the 5,000-node synthetic workload.
//
//   build/bench/codec_bench [--benchmark_filter=...]
//
// Everything runs on the 5,000-node workload except the /15000 variants.
#include <benchmark/benchmark.h>

#include <map>

#include "baseline_codec.h"
#include "gpusched/admission/pod_mutator.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/admission_codec.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy.h"
#include "workload.h"

namespace {

using namespace gpusched;

// The workload of `nodes` nodes at 50% GPU occupancy, built once per size and usage.
const bench::Workload& Load(int nodes = 5000,
                            bench::NodeUsage usage = bench::NodeUsage::kRepeating) {
  static std::map<std::pair<int, bench::NodeUsage>, bench::Workload> loaded;
  auto key = std::make_pair(nodes, usage);
  auto it = loaded.find(key);
  if (it == loaded.end())
    it = loaded.emplace(key, bench::MakeWorkload(nodes, 0.5, 42, usage)).first;
  return it->second;
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
    plugins["gpu-binpack"].enabled = true;
    plugins["gpu-binpack"].weight = 1;
    plugins["fgd"].enabled = false;
    plugins["consolidate"].enabled = false;
  }
  return spec;
}

// Engine work per node: filter and prioritize for every node name, no decoding or encoding.
void BM_EngineFilterAndScore(benchmark::State& state) {
  const auto& w = Load();
  auto app = bench::MakeServerApp(w, BenchPolicy(state.range(0)), /*count_decisions=*/false);
  ExtenderArgs args = DecodeExtenderArgs(w.names_request);
  for (auto _ : state) {
    benchmark::DoNotOptimize(app->service().Filter(args));
    benchmark::DoNotOptimize(app->service().Prioritize(args));
  }
  state.SetItemsProcessed(state.iterations() * args.node_names->size());
}
BENCHMARK(BM_EngineFilterAndScore)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The engine alone on all 5,000 nodes, judging them per content class as requests do
// (range(0) == 0), or every node on its own (1): the worst case, a cluster where no two nodes
// have the same labels, allocatable and usage.
void BM_EngineClasses(benchmark::State& state) {
  const auto& w = Load();
  Policy policy(DefaultPolicySpec());
  PodInfo pod = DecodeExtenderArgs(w.names_request).pod;
  const Engine& engine = *policy.Select(pod).engine;
  auto cycle = engine.NewCycle(pod, *w.snapshot);
  std::vector<const NodeState*> nodes;
  std::vector<std::string_view> names;
  for (const auto& n : w.snapshot->nodes()) {
    nodes.push_back(n.get());
    names.push_back(n->info.name);
  }
  Candidates candidates{nodes, {}, 0, names, {}};
  if (state.range(0) == 0) {
    candidates.classes = w.snapshot->classes();
    candidates.class_count = w.snapshot->class_count();
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.Filter(*cycle, candidates));
    benchmark::DoNotOptimize(engine.Prioritize(*cycle, candidates));
  }
  state.SetItemsProcessed(state.iterations() * nodes.size());
}
BENCHMARK(BM_EngineClasses)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The answers to the workload's NodeNames request, computed once for the encoder benchmarks.
struct Answers {
  ExtenderArgs args;
  ExtenderFilterResult filter;
  HostPriorityList prioritize;
};
const Answers& NamesAnswers() {
  static const Answers answers = [] {
    auto app = bench::MakeServerApp(Load(), DefaultPolicySpec(), /*count_decisions=*/false);
    Answers a{DecodeExtenderArgs(Load().names_request), {}, {}};
    a.filter = app->service().Filter(a.args);
    a.prioritize = app->service().Prioritize(a.args);
    return a;
  }();
  return answers;
}

void BM_EncodeFilterResult(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(EncodeExtenderFilterResult(NamesAnswers().filter));
}
BENCHMARK(BM_EncodeFilterResult)->Unit(benchmark::kMicrosecond);

void BM_EncodeFilterResultBaseline(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(baseline::EncodeExtenderFilterResult(NamesAnswers().filter));
  }
}
BENCHMARK(BM_EncodeFilterResultBaseline)->Unit(benchmark::kMicrosecond);

void BM_EncodeHostPriorityList(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(EncodeHostPriorityList(NamesAnswers().prioritize));
}
BENCHMARK(BM_EncodeHostPriorityList)->Unit(benchmark::kMicrosecond);

void BM_EncodeHostPriorityListBaseline(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(baseline::EncodeHostPriorityList(NamesAnswers().prioritize));
  }
}
BENCHMARK(BM_EncodeHostPriorityListBaseline)->Unit(benchmark::kMicrosecond);

// The whole handler for one filter + prioritize pair on range(0) names, as `serve` runs it
// (metrics counted): decode, engine, encode, twice. No HTTP.
void BM_HandlerPair(benchmark::State& state) {
  const auto& w = Load(static_cast<int>(state.range(0)));
  auto app = bench::MakeServerApp(w);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        EncodeExtenderFilterResult(app->service().Filter(DecodeExtenderArgs(w.names_request))));
    benchmark::DoNotOptimize(
        EncodeHostPriorityList(app->service().Prioritize(DecodeExtenderArgs(w.names_request))));
  }
}
BENCHMARK(BM_HandlerPair)->Arg(5000)->Arg(15000)->Unit(benchmark::kMicrosecond);

// Publishing a snapshot of range(0) nodes: the name index and content classes are built here,
// once per publication (at most every 50 ms), so requests need not.
void BM_PublishSnapshot(benchmark::State& state) {
  const auto& w = Load(static_cast<int>(state.range(0)));
  std::vector<ClusterSnapshot::NodePtr> nodes(w.snapshot->nodes().begin(),
                                              w.snapshot->nodes().end());
  for (auto _ : state) {
    ClusterSnapshot snapshot(nodes, 2);
    benchmark::DoNotOptimize(snapshot.class_count());
  }
  state.counters["classes"] = static_cast<double>(w.snapshot->class_count());
}
BENCHMARK(BM_PublishSnapshot)->Arg(5000)->Arg(15000)->Unit(benchmark::kMillisecond);

// Publishing while kube-scheduler drains a backlog, as bench/registration.sh drives it: range(0)
// 8-GPU nodes, 2,000 pods of 1 CPU (70% also one GPU) created pending, and per iteration what one
// pod's cycle brings between two publications: the filter's assumption of the next pod, the watch
// reporting the bind of the pod range(1) before it (that many assumptions outstanding: binds wait
// on a loaded API server), then the publisher's turn (ExpireAssumptions, BuildSnapshot). The
// backlog is recreated whenever it runs out.
void BM_PublishDuringDrain(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  constexpr int kPods = 2000;
  const int lag = static_cast<int>(state.range(1));
  auto pod = [](int i) {
    PodInfo p;
    p.name = "pod-" + std::to_string(i);
    p.namespace_name = "bench";
    p.uid = "uid-" + std::to_string(i);
    p.phase = PodPhase::kPending;
    p.requests = ResourceList{{"cpu", 1000}, {"memory", int64_t{1} << 40}};
    if (i % 10 < 7) p.requests.Set("nvidia.com/gpu", 1000);
    return p;
  };
  auto node_of = [nodes](int i) { return "node-" + std::to_string(i / 8 % nodes); };
  auto fresh_ledger = [&] {
    auto ledger = std::make_unique<ClusterLedger>(GpuResourceNames());
    for (int n = 0; n < nodes; ++n) {
      NodeInfo info;
      info.name = "node-" + std::to_string(n);
      info.gpu.product = "A100-SXM4-80GB";
      info.allocatable = ResourceList{{"cpu", 64000},
                                      {"memory", int64_t{512} << 40},
                                      {"nvidia.com/gpu", 8000},
                                      {"pods", 110000}};
      info.capacity = info.allocatable;
      ledger->UpsertNode(std::move(info));
    }
    for (int i = 0; i < kPods; ++i) ledger->UpsertPod(pod(i));
    ledger->BuildSnapshot();
    return ledger;
  };
  auto ledger = fresh_ledger();
  auto now = ClusterLedger::Clock::now();
  int next = 0;
  for (auto _ : state) {
    if (next == kPods + lag) {
      state.PauseTiming();
      ledger = fresh_ledger();
      next = 0;
      state.ResumeTiming();
    }
    if (next < kPods) {
      PodInfo p = pod(next);
      ledger->Assume(PodKey(p), node_of(next), now, std::chrono::seconds(30));
    }
    if (next >= lag) {
      PodInfo bound = pod(next - lag);
      bound.node_name = node_of(next - lag);
      ledger->UpsertPod(bound);
    }
    ++next;
    ledger->ExpireAssumptions(now);
    benchmark::DoNotOptimize(ledger->BuildSnapshot());
  }
  state.counters["assumed"] = static_cast<double>(ledger->assumed_count());
}
BENCHMARK(BM_PublishDuringDrain)
    ->Args({500, 100})
    ->Args({500, 1000})
    ->Args({3000, 100})
    ->Args({3000, 1000})
    ->Unit(benchmark::kMicrosecond);

// The same where every node is a content class of its own (a CPU-only pod of its own size on
// each), so GPU classes are numbered over every node.
void BM_PublishDistinctSnapshot(benchmark::State& state) {
  const auto& w = Load(static_cast<int>(state.range(0)), bench::NodeUsage::kDistinct);
  std::vector<ClusterSnapshot::NodePtr> nodes(w.snapshot->nodes().begin(),
                                              w.snapshot->nodes().end());
  for (auto _ : state) {
    ClusterSnapshot snapshot(nodes, 2);
    benchmark::DoNotOptimize(snapshot.gpu_class_count());
  }
  state.counters["classes"] = static_cast<double>(w.snapshot->class_count());
  state.counters["gpu_classes"] = static_cast<double>(w.snapshot->gpu_class_count());
}
BENCHMARK(BM_PublishDistinctSnapshot)->Arg(15000)->Unit(benchmark::kMillisecond);

// The admission webhook's answer to one review: a 1-GPU pod pinned by annotation to NVIDIA-L4 with
// a memory floor and its own zone affinity, decoded, judged and patched, the vocabulary of the
// 5,000-node snapshot read once (as the webhook keeps it per snapshot). Next to it in the same run:
// decoding the review alone, and reading the vocabulary of the snapshot (paid once per snapshot).
const std::string& PinnedPodReview() {
  static const std::string review = R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",
    "request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},
    "resource":{"group":"","version":"v1","resource":"pods"},"namespace":"ml","operation":"CREATE",
    "object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ml",
    "annotations":{"gpusched.io/gpu-product":"NVIDIA-L4","gpusched.io/min-gpu-memory":"20Gi"}},
    "spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
    {"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone",
    "operator":"In","values":["a","b"]}]}]}}},"containers":[{"name":"c","image":"i",
    "resources":{"requests":{"cpu":"1","memory":"4Gi"},"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
  return review;
}

void BM_AdmissionReview(benchmark::State& state) {
  const auto& w = Load();
  auto app = bench::MakeServerApp(w, DefaultPolicySpec(), /*count_decisions=*/false);
  PodMutator mutator(app->inventory().snapshots(), app->policies());
  if (mutator.Review(PinnedPodReview()).mutation.result != MutationResult::kPatched) {
    state.SkipWithError("the review was not patched");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(mutator.Review(PinnedPodReview()));
}
BENCHMARK(BM_AdmissionReview)->Unit(benchmark::kMicrosecond);

void BM_AdmissionDecodeOnly(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(DecodeAdmissionReview(PinnedPodReview()));
}
BENCHMARK(BM_AdmissionDecodeOnly)->Unit(benchmark::kMicrosecond);

void BM_AdmissionVocabulary(benchmark::State& state) {
  const auto& w = Load();
  auto app = bench::MakeServerApp(w, DefaultPolicySpec(), /*count_decisions=*/false);
  auto snapshot = app->inventory().snapshots().Get();
  for (auto _ : state) benchmark::DoNotOptimize(VocabularyOf(*snapshot));
}
BENCHMARK(BM_AdmissionVocabulary)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
