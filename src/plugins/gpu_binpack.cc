#include "gpusched/plugins/gpu_binpack.h"

#include "gpusched/packing/in_tree_scores.h"
#include "gpusched/util/quantity.h"

namespace gpusched {

int64_t ResourceWeights::For(std::string_view resource) const {
  auto it = by_name.find(resource);
  return it == by_name.end() ? default_weight : it->second;
}

namespace {

// Its settings: a weight per resource and the default weight, as kube-scheduler's
// NodeResourcesFit takes them.
struct BinpackArgs {
  ResourceWeights weights;

  void Read(SettingsSource& source) {
    if (source.Has("resourceWeights")) {
      if (auto map = source.NumberMap("resourceWeights", 0, kMaxNodeScore)) {
        weights.by_name.clear();
        for (const auto& [resource, w] : *map) weights.by_name[resource] = static_cast<int64_t>(w);
      }
    }
    if (source.Has("defaultResourceWeight")) {
      if (auto w = source.Number("defaultResourceWeight", 0, kMaxNodeScore)) {
        weights.default_weight = static_cast<int64_t>(*w);
      }
    }
  }
  void Print(SettingsSink& sink) const {
    NamedNumbers by_name;
    for (const auto& [resource, w] : weights.by_name) {
      by_name.emplace_back(resource, static_cast<double>(w));
    }
    sink.NumberMap("resourceWeights", by_name);
    sink.Number("defaultResourceWeight", static_cast<double>(weights.default_weight));
  }
};

}  // namespace

PluginEntry GpuBinpackPlugin::Entry() {
  return PluginEntry{
      .name = kName,
      .extends = PointsOf<GpuBinpackPlugin>(),
      .enabled = false,
      .weight = 1,
      .keys = {"resourceWeights", "defaultResourceWeight"},
      .default_config = [] { return std::make_unique<ArgsConfig<BinpackArgs>>(); },
      .make =
          [](const PluginConfig* config, const PodIntent&) {
            return std::make_unique<GpuBinpackPlugin>(ArgsOf<BinpackArgs>(config).weights);
          }};
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
