#include "gpusched/engine/engine.h"

#include <algorithm>
#include <cmath>

namespace gpusched {

Engine::Engine(GpuResourceNames gpu_names, std::vector<WeightedPlugin> plugins)
    : gpu_names_(std::move(gpu_names)), plugins_(std::move(plugins)) {}

std::unique_ptr<Cycle> Engine::NewCycle(const PodInfo& pod,
                                        const ClusterSnapshot& snapshot) const {
  return std::make_unique<Cycle>(pod, GpuDemand(pod, gpu_names_), snapshot);
}

std::vector<Verdict> Engine::Filter(const Cycle& cycle,
                                    std::span<const NodeState* const> nodes) const {
  std::vector<Verdict> verdicts(nodes.size());
  if (cycle.gpu_demand().empty()) return verdicts;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& p : plugins_) {
      Verdict v = p.plugin->Filter(cycle, *nodes[i]);
      if (!v.passed()) {
        verdicts[i] = v;
        break;
      }
    }
  }
  return verdicts;
}

std::vector<int64_t> Engine::Prioritize(const Cycle& cycle,
                                        std::span<const NodeState* const> nodes) const {
  std::vector<int64_t> result(nodes.size(), 0);
  if (cycle.gpu_demand().empty()) return result;
  std::vector<double> total(nodes.size(), 0);
  std::vector<double> scores(nodes.size());
  double weight_sum = 0;
  for (const auto& p : plugins_) {
    if (p.weight <= 0) continue;
    for (size_t i = 0; i < nodes.size(); ++i) scores[i] = p.plugin->Score(cycle, *nodes[i]);
    p.plugin->Normalize(cycle, scores);
    for (size_t i = 0; i < nodes.size(); ++i) total[i] += p.weight * scores[i];
    weight_sum += p.weight;
  }
  if (weight_sum == 0) return result;
  for (size_t i = 0; i < nodes.size(); ++i) {
    double mean = total[i] / weight_sum;  // 0..kMaxNodeScore
    auto scaled = std::llround(mean * kMaxExtenderPriority / kMaxNodeScore);
    result[i] = std::clamp<int64_t>(scaled, 0, kMaxExtenderPriority);
  }
  return result;
}

}  // namespace gpusched
