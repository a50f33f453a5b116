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

std::map<std::string, double, std::less<>> ProductReserveScores(
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
  double highest = 0;
  for (auto& [product, p] : pressure) {
    p /= static_cast<double>(free_gpu_milli.find(product)->second) / kMilliPerGpu;
    highest = std::max(highest, p);
  }
  std::map<std::string, double, std::less<>> scores;
  if (highest <= 0) return scores;
  for (const auto& [product, free] : free_gpu_milli) {
    if (free <= 0) continue;
    auto p = pressure.find(product);
    scores[product] = kMaxNodeScore * (1 - (p == pressure.end() ? 0 : p->second / highest));
  }
  return scores;
}

void ProductReservePlugin::Prepare(Cycle& cycle) const {
  PrepareTaskShape(cycle);
  if (!TaskShapeOf(cycle).wants_gpu()) return;
  auto data = std::make_unique<ProductScores>();
  data->by_product = ProductReserveScores(cycle.snapshot().observed_workload(),
                                          cycle.snapshot().free_gpu_milli_by_product());
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
