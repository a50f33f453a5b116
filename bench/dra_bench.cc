// What judging a pod's DRA claims costs (issue #48): NVIDIA's documented claims, and the worst
// pod the bounds let through (selectors just under the work bound, on few and on many kinds of
// devices), against the ledger's catalog. Also what a catalog
// publication costs with 50,000 claims (shared entries: one shard copied per change).
//
//   build/bench/dra_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpusched/dra/dra_claims.h"
#include "gpusched/dra/dra_ledger.h"
#include "testing/dra_fixtures.h"

namespace gpusched {
namespace {

using namespace testing::dra;

// `kinds` products of one GPU each, NVIDIA's class.
DraLedger Cluster(int kinds) {
  DraLedger dra;
  for (int i = 0; i < kinds; ++i) {
    dra.Upsert(Slice("n" + std::to_string(i), Gpus(1, "product " + std::to_string(i))));
  }
  dra.Upsert(GpuClass());
  return dra;
}

// A selector of `clauses` productName comparisons joined by ||, false on every kind (each clause
// is evaluated).
std::string Clauses(int clauses) {
  std::string s;
  for (int i = 0; i < clauses; ++i) {
    s += (i ? " || " : "") + std::string("device.attributes['gpu.nvidia.com'].productName == 'x") +
         std::to_string(i) + "'";
  }
  return s;
}

void BM_NvidiaClaims(benchmark::State& state) {
  DraLedger dra = Cluster(30);
  dra.Upsert(Claim("gpu", 1));
  dra.Upsert(Claim("pin", 2,
                   {"device.attributes['gpu.nvidia.com'].productName == "
                    "'product 3'"}));
  PodInfo pod = ClaimPod("p", "gpu");
  pod.claims.push_back(PodClaimRef{"pin", "pin", false});
  auto catalog = dra.Catalog();
  for (auto _ : state) benchmark::DoNotOptimize(DraDemandOf(pod, *catalog));
}
BENCHMARK(BM_NvidiaClaims)->Unit(benchmark::kMicrosecond);

// The heaviest pod the work bound judges on `kinds` kinds (requests of an 8-clause selector, as
// many as stay under kMaxDraSelectorWork, up to 32 claims of 32), or one request more (unmodelled
// when the bound is reached: it costs no more).
void BM_HeaviestPod(benchmark::State& state) {
  const int kinds = static_cast<int>(state.range(0));
  const bool over = state.range(1) != 0;
  DraLedger dra = Cluster(kinds);
  // Steps per request and kind: the class's selector (7 nodes), the request's (3 a clause, 1 ||).
  const size_t per_request = (7 + 3 * 8 + 1) * static_cast<size_t>(kinds);
  const size_t requests =
      std::min<size_t>(1024, kMaxDraSelectorWork / per_request) + (over ? 1 : 0);
  PodInfo pod = ClaimPod("p", "c0");
  pod.claims.clear();
  for (size_t left = requests, c = 0; left > 0; ++c) {
    DraClaim claim = Claim("c" + std::to_string(c), 1, {Clauses(8)});
    claim.requests.assign(std::min<size_t>(32, left), claim.requests[0]);
    left -= claim.requests.size();
    dra.Upsert(claim);
    pod.claims.push_back(PodClaimRef{claim.name, claim.name, false});
  }
  auto catalog = dra.Catalog();
  DraDemand probe = DraDemandOf(pod, *catalog);
  state.SetLabel(std::to_string(requests) + " requests, " +
                 (probe.modelled ? "judged" : "unmodelled: " + probe.unmodelled_reason));
  for (auto _ : state) benchmark::DoNotOptimize(DraDemandOf(pod, *catalog));
}
BENCHMARK(BM_HeaviestPod)
    ->Args({8, 0})
    ->Args({8, 1})
    ->Args({64, 0})
    ->Args({512, 0})
    ->Args({512, 1})
    ->Unit(benchmark::kMillisecond);

// A claim event and the next catalog, with `claims` claims held.
void BM_ClaimEventAndCatalog(benchmark::State& state) {
  DraLedger dra = Cluster(8);
  const int claims = static_cast<int>(state.range(0));
  for (int i = 0; i < claims; ++i) dra.Upsert(Claim("c" + std::to_string(i), 1));
  auto held = dra.Catalog();
  int i = 0;
  for (auto _ : state) {
    dra.Upsert(Claim("c" + std::to_string(i++ % claims), 2));
    held = dra.Catalog();  // a snapshot holds it, as the live inventory's do
    benchmark::DoNotOptimize(held.get());
  }
}
BENCHMARK(BM_ClaimEventAndCatalog)->Arg(5000)->Arg(50000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpusched

BENCHMARK_MAIN();
