#include "gpusched/plugins/product_reserve.h"

#include "gpusched/engine/gpu_class_memo.h"
#include "gpusched/plugins/task_shape.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace gpusched {
namespace {

// The pod's score per product, and per GPU class (whose nodes share their product) as nodes are
// judged: a lookup by the product's name reads each node's label text, far from what the other
// plugins read of it. Mutable: a cycle serves one thread at a time.
struct ProductScores : CycleData {
  std::map<std::string, double, std::less<>> by_product;
  mutable GpuClassMemo<double> by_gpu_class;
};

}  // namespace

namespace {

using Scores = std::map<std::string, double, std::less<>>;
using PerProduct = std::map<std::string, double, std::less<>>;

// Per product with free GPUs, the share of arriving GPUs the pinned shapes of the observed workload
// ask of it (a shape accepting k such products counts 1/k on each); empty when no pinned shape
// asks anything of them.
PerProduct ObservedPinnedShare(std::span<const WeightedShape> workload,
                               const GpuMilliByProduct& free_gpu_milli) {
  double gpus_per_task = 0;
  PerProduct pinned;
  for (const auto& w : workload) {
    if (!w.shape.wants_gpu()) continue;
    const double gpus = w.weight * static_cast<double>(w.shape.num_gpu) *
                        static_cast<double>(w.shape.gpu_milli) / kMilliPerGpu;
    gpus_per_task += gpus;
    if (w.shape.gpu_models.empty()) continue;
    std::vector<std::string_view> accepted;
    for (const auto& [product, free] : free_gpu_milli) {
      if (free > 0 && w.shape.AcceptsModel(product)) accepted.push_back(product);
    }
    for (std::string_view product : accepted) {
      pinned[std::string(product)] += gpus / static_cast<double>(accepted.size());
    }
  }
  if (gpus_per_task <= 0) return {};  // every shape weighs nothing: nothing seen to go by
  for (auto& [product, share] : pinned) share /= gpus_per_task;
  return pinned;
}

// The prior's share: every product as needed as its share of all GPUs (products filling in step).
PerProduct CapacityShare(const GpusByProduct& gpus, const GpuMilliByProduct& free_gpu_milli) {
  double all = 0;
  for (const auto& [product, n] : gpus) all += static_cast<double>(std::max<int64_t>(n, 0));
  PerProduct share;
  if (all <= 0) return share;
  for (const auto& [product, free] : free_gpu_milli) {
    auto n = gpus.find(product);
    if (free > 0 && n != gpus.end() && n->second > 0) {
      share[product] = static_cast<double>(n->second) / all;
    }
  }
  return share;
}

// Slack(P) = free GPUs of P - share(P) x free GPUs of the fleet: what P keeps for pods free to
// choose once the pods pinned to it have taken their share of what is left to fill. Score = 100 x
// (1 - (highest slack - slack(P)) / free GPUs of P), within 0..100: how much of its own room a
// product lacks against the roomiest.
Scores ScoresOfSlack(const PerProduct& share, const GpuMilliByProduct& free_gpu_milli) {
  PerProduct free_gpus;
  double fleet_free = 0;
  for (const auto& [product, milli] : free_gpu_milli) {
    if (milli <= 0) continue;
    free_gpus[product] = static_cast<double>(milli) / kMilliPerGpu;
    fleet_free += free_gpus[product];
  }
  PerProduct slack;
  double highest = -std::numeric_limits<double>::infinity();
  for (const auto& [product, free] : free_gpus) {
    auto s = share.find(product);
    slack[product] = free - (s == share.end() ? 0 : s->second * fleet_free);
    highest = std::max(highest, slack[product]);
  }
  Scores scores;
  for (const auto& [product, left] : slack) {
    scores[product] =
        kMaxNodeScore * std::clamp(1 - (highest - left) / free_gpus[product], 0.0, 1.0);
  }
  return scores;
}

}  // namespace

Scores ProductReserveScores(const ProductReserveInputs& in) {
  if (in.free_gpu_milli.size() < 2) return {};  // one product: nothing to choose between
  const PerProduct observed = ObservedPinnedShare(in.workload, in.free_gpu_milli);
  const double prior_share = in.prior_pods / (in.prior_pods + std::max(0.0, in.observed_pods));
  if (observed.empty() && prior_share <= 0) return {};
  const PerProduct prior = CapacityShare(in.gpus, in.free_gpu_milli);
  if (observed.empty()) {
    // No pin seen: the prior speaks for its share, the pins' side has no preference (100).
    Scores in_step = ScoresOfSlack(prior, in.free_gpu_milli);
    for (auto& [product, score] : in_step) {
      score = (1 - prior_share) * kMaxNodeScore + prior_share * score;
    }
    return in_step;
  }
  // The prior spreads the part of the workload seen pinned over the products as their GPUs are.
  double pinned_share = 0;
  for (const auto& [product, o] : observed) pinned_share += o;
  PerProduct share;
  for (const auto& [product, free] : in.free_gpu_milli) {
    if (free <= 0) continue;
    auto o = observed.find(product);
    auto p = prior.find(product);
    share[product] = (1 - prior_share) * (o == observed.end() ? 0 : o->second) +
                     prior_share * pinned_share * (p == prior.end() ? 0 : p->second);
  }
  return ScoresOfSlack(share, in.free_gpu_milli);
}

namespace {

// Its setting: how many pods the prior weighs like (0: the observed pins alone).
struct ProductReserveArgs {
  double prior_pods = kProductReservePriorPods;

  void Read(SettingsSource& source) {
    if (source.Has("priorPods")) {
      if (auto v = source.Number("priorPods", 0, 1e6)) prior_pods = *v;
    }
  }
  void Print(SettingsSink& sink) const { sink.Number("priorPods", prior_pods); }
};

}  // namespace

PluginEntry ProductReservePlugin::Entry() {
  return PluginEntry{
      .name = kName,
      .extends = PointsOf<ProductReservePlugin>(),
      .enabled = true,
      .weight = 2,
      .keys = {"priorPods"},
      .default_config = [] { return std::make_unique<ArgsConfig<ProductReserveArgs>>(); },
      .make =
          [](const PluginConfig* config, const PodIntent&) {
            return std::make_unique<ProductReservePlugin>(
                ArgsOf<ProductReserveArgs>(config).prior_pods);
          }};
}

void ProductReservePlugin::Prepare(Cycle& cycle) const {
  PrepareTaskShape(cycle);
  if (!TaskShapeOf(cycle).wants_gpu()) return;
  auto data = std::make_unique<ProductScores>();
  const ClusterSnapshot& snapshot = cycle.snapshot();
  data->by_product = ProductReserveScores({snapshot.observed_workload(), snapshot.observed_pods(),
                                           snapshot.gpus_by_product(),
                                           snapshot.free_gpu_milli_by_product(), prior_pods_});
  if (!data->by_product.empty()) cycle.Put(kName, std::move(data));
}

bool ProductReservePlugin::ScoresPod(const Cycle& cycle) const {
  return cycle.Get<ProductScores>(kName) != nullptr;
}

double ProductReservePlugin::Score(const Cycle& cycle, const NodeState& node) const {
  const ProductScores* scores = cycle.Get<ProductScores>(kName);
  if (scores == nullptr) return kMaxNodeScore;
  return scores->by_gpu_class.Of(cycle, node, [&](const NodeState& n, double& score) {
    auto it = scores->by_product.find(n.info.gpu.product);
    score = it == scores->by_product.end() ? kMaxNodeScore : it->second;
  });
}

}  // namespace gpusched
