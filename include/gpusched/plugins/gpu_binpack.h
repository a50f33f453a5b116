// gpu-binpack: MostAllocated bin packing over the GPU resources the pod asks for, with the integer
// formula of kube-scheduler's NodeResourcesFit MostAllocated strategy:
//   per resource r: min(used_r + request_r, allocatable_r) * 100 / allocatable_r
//   node score: sum(score_r * weight_r) / sum(weight_r)
// Resources the node does not offer (allocatable 0) and resources with weight 0 are skipped.
// The per-resource formula is MostRequestedScore (packing/in_tree_scores.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

// Weights per resource name; resources not listed get `default_weight`.
struct ResourceWeights {
  std::map<std::string, int64_t, std::less<>> by_name;
  int64_t default_weight = 1;

  int64_t For(std::string_view resource) const;
};

class GpuBinpackPlugin : public NamedPlugin<GpuBinpackPlugin>, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "gpu-binpack";
  explicit GpuBinpackPlugin(ResourceWeights weights) : weights_(std::move(weights)) {}
  // Off by default; settings `resourceWeights` (resource -> weight) and `defaultResourceWeight`.
  static PluginEntry Entry();
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  ResourceWeights weights_;
};

}  // namespace gpusched
