// The plugin list: one line per plugin, in evaluation order
// (include/gpusched/plugins/plugin_entry.h).
#include <algorithm>

#include "gpusched/plugins/cpu_reserve.h"
#include "gpusched/plugins/gang_topology.h"
#include "gpusched/plugins/gpu_binpack.h"
#include "gpusched/plugins/gpu_fit.h"
#include "gpusched/plugins/gpu_match.h"
#include "gpusched/plugins/maintenance.h"
#include "gpusched/plugins/mig_fit.h"
#include "gpusched/plugins/packing_scores.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/plugins/product_reserve.h"
#include "gpusched/plugins/sharing.h"

namespace gpusched {
namespace {

// A plugin without settings of its own, made by `make(profile intent)`.
template <class P, class Make>
PluginEntry Built(bool enabled, double weight, Make make) {
  return PluginEntry{
      .name = P::kName,
      .extends = PointsOf<P>(),
      .enabled = enabled,
      .weight = weight,
      .keys = {},
      .default_config = nullptr,
      .make = [make](const PluginConfig*, const PodIntent& intent) -> std::unique_ptr<Plugin> {
        return make(intent);
      }};
}

// A plugin built by its default constructor.
template <class P>
PluginEntry Plain(bool enabled, double weight) {
  return Built<P>(enabled, weight, [](const PodIntent&) { return std::make_unique<P>(); });
}

}  // namespace

const std::vector<PluginEntry>& AllPlugins() {
  // Plugins that only filter have weight 0 (and take no other). Scoring plugins that do not apply
  // to a pod (mig-fit for a pod without MIG requests, gpu-match without preferences,
  // product-reserve while no pod pins a product) stay out of its weighted mean.
  static const std::vector<PluginEntry> kAll = {
      MaintenancePlugin::Entry(),
      GpuMatchPlugin::Entry(),
      SharingPlugin::Entry(),
      Built<MigFitPlugin>(
          true, 1, [](const PodIntent& intent) { return std::make_unique<MigFitPlugin>(intent); }),
      Plain<GpuFitPlugin>(true, 0),
      // MostAllocated over the GPU resources: an alternative to fgd + consolidate.
      GpuBinpackPlugin::Entry(),
      // FGD's fragmentation gradient, with a fixed node preference that settles its frequent ties
      // the same way every time (docs/benchmarks.md measures the pair).
      FgdPlugin::Entry(),
      // The FGD paper's baselines, for a policy to turn on.
      Plain<BestFitPlugin>(false, 1),
      Plain<DotProductPlugin>(false, 1),
      Plain<GpuPackingPlugin>(false, 1),
      Plain<ConsolidatePlugin>(true, 1),
      // In fleets of several products: pods free to choose keep off the products pinned pods need.
      ProductReservePlugin::Entry(),
      // Where nodes declare CPU: pods keep CPU on the nodes whose idle GPUs need it.
      Plain<CpuReservePlugin>(true, 2),
      // Pods of one job together in the topology, groups of known size whole or not at all; its
      // weight outvotes the rest, which orders nodes within a level.
      GangTopologyPlugin::Entry(),
  };
  return kAll;
}

const PluginEntry* FindPlugin(std::string_view name) {
  const auto& all = AllPlugins();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const PluginEntry& e) { return e.name == name; });
  return it == all.end() ? nullptr : &*it;
}

const std::vector<std::string_view>& RegisteredPlugins() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const PluginEntry& e : AllPlugins()) names.push_back(e.name);
    return names;
  }();
  return kNames;
}

}  // namespace gpusched
