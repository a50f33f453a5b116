#include "gpusched/plugins/product_reserve.h"

#include "gpusched/plugins/task_shape.h"

#include <algorithm>
#include <vector>

namespace gpusched {
namespace {

struct ProductScores : CycleData {
  std::map<std::string, double, std::less<>> by_product;
};

}  // namespace

namespace {

using Scores = std::map<std::string, double, std::less<>>;

// 100 x (1 - pressure / the highest) per product with free GPUs; empty when no product has any.
Scores ScoresOfPressure(const std::map<std::string, double, std::less<>>& pressure,
                        const GpuMilliByProduct& free_gpu_milli) {
  double highest = 0;
  for (const auto& [product, p] : pressure) highest = std::max(highest, p);
  Scores scores;
  if (highest <= 0) return scores;
  for (const auto& [product, free] : free_gpu_milli) {
    if (free <= 0) continue;
    auto p = pressure.find(product);
    scores[product] = kMaxNodeScore * (1 - (p == pressure.end() ? 0 : p->second / highest));
  }
  return scores;
}

// The pinned shapes' GPUs per task asked of each product with free GPUs, per free GPU of it.
std::map<std::string, double, std::less<>> ObservedPressure(
    std::span<const WeightedShape> workload, const GpuMilliByProduct& free_gpu_milli) {
  std::map<std::string, double, std::less<>> pressure;
  for (const auto& w : workload) {
    if (w.shape.gpu_models.empty() || !w.shape.wants_gpu()) continue;
    std::vector<std::string_view> accepted;
    for (const auto& [product, free] : free_gpu_milli) {
      if (free > 0 && w.shape.AcceptsModel(product)) accepted.push_back(product);
    }
    double gpus_per_task = w.weight * static_cast<double>(w.shape.num_gpu) *
                           static_cast<double>(w.shape.gpu_milli) / kMilliPerGpu;
    for (std::string_view product : accepted) {
      pressure[std::string(product)] += gpus_per_task / static_cast<double>(accepted.size());
    }
  }
  for (auto& [product, p] : pressure) {
    p /= static_cast<double>(free_gpu_milli.find(product)->second) / kMilliPerGpu;
  }
  return pressure;
}

// The prior's pressure: every product as needed as its share of all GPUs, per free GPU of it
// (its GPUs over its free GPUs), so that the products fill in step.
std::map<std::string, double, std::less<>> PriorPressure(const GpusByProduct& gpus,
                                                         const GpuMilliByProduct& free_gpu_milli) {
  std::map<std::string, double, std::less<>> pressure;
  for (const auto& [product, free] : free_gpu_milli) {
    auto all = gpus.find(product);
    if (free <= 0 || all == gpus.end() || all->second <= 0) continue;
    pressure[product] = static_cast<double>(all->second) * kMilliPerGpu / static_cast<double>(free);
  }
  return pressure;
}

// 100 x (the lowest pressure / pressure): products as full as the emptiest all score 100, as on
// the observed side products no pin needs do.
Scores ScoresInStep(const std::map<std::string, double, std::less<>>& pressure) {
  double lowest = 0;
  for (const auto& [product, p] : pressure) lowest = lowest == 0 ? p : std::min(lowest, p);
  Scores scores;
  for (const auto& [product, p] : pressure) scores[product] = kMaxNodeScore * lowest / p;
  return scores;
}

}  // namespace

Scores ProductReserveScores(const ProductReserveInputs& in) {
  if (in.free_gpu_milli.size() < 2) return {};  // one product: nothing to choose between
  Scores observed = ScoresOfPressure(ObservedPressure(in.workload, in.free_gpu_milli),
                                     in.free_gpu_milli);
  const double prior_share = in.prior_pods / (in.prior_pods + std::max(0.0, in.observed_pods));
  Scores prior = prior_share > 0 ? ScoresInStep(PriorPressure(in.gpus, in.free_gpu_milli))
                                 : Scores{};
  if (observed.empty() && prior.empty()) return {};
  // No pinned shape seen: every product scores 100 on that side of the blend.
  Scores scores;
  for (const auto& [product, free] : in.free_gpu_milli) {
    if (free <= 0) continue;
    auto o = observed.find(product);
    auto p = prior.find(product);
    double seen = o == observed.end() ? kMaxNodeScore : o->second;
    double expected = p == prior.end() ? kMaxNodeScore : p->second;
    scores[product] = (1 - prior_share) * seen + prior_share * expected;
  }
  return scores;
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
  auto it = scores->by_product.find(node.info.gpu.product);
  return it == scores->by_product.end() ? kMaxNodeScore : it->second;
}

}  // namespace gpusched
