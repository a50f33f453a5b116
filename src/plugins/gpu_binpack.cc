#include "gpusched/plugins/gpu_binpack.h"

#include "gpusched/util/quantity.h"

namespace gpusched {

int64_t ResourceWeights::For(std::string_view resource) const {
  auto it = by_name.find(resource);
  return it == by_name.end() ? default_weight : it->second;
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return requested * static_cast<int64_t>(kMaxNodeScore) / capacity;
}

double GpuBinpackPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (const auto& want : cycle.gpu_demand()) {
    int64_t weight = weights_.For(want.name);
    int64_t allocatable = node.info.allocatable.units(want.name);
    if (weight <= 0 || allocatable == 0) continue;
    int64_t requested = node.used.units(want.name) + MilliToUnitsCeil(want.milli);
    node_score += MostRequestedScore(requested, allocatable) * weight;
    weight_sum += weight;
  }
  return weight_sum == 0 ? 0 : static_cast<double>(node_score / weight_sum);
}

}  // namespace gpusched
