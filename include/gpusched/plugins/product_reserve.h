// product-reserve: in a fleet of several GPU products, a GPU pod that may use more than one of
// them prefers the product that pods pinned to a product need least, so the products pinned pods
// need stay free for them.
//
// Per product P: pressure(P) = the GPUs per task that the pinned shapes of the observed workload
// (every shape seen, rare ones included: a rare pod may ask for many GPUs) ask of P (a shape
// accepting k of the products with free GPUs counts 1/k on each), divided by the GPUs of P still
// free. Score = 100 x (1 - pressure(P) / the highest pressure); nodes of a product no pinned shape
// asks for score 100. Free GPUs, not all of them: pinned pods keep arriving while free pods fill
// a product, so what matters is the room left for them; over all GPUs a product's pressure stays
// the same however full it gets. Pods that ask for no GPU are not scored; so are all pods while
// no shape is pinned. Prepare computes the per-product scores once per cycle.
#ifndef GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_
#define GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_

#include <map>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/plugin.h"

namespace gpusched {

class ProductReservePlugin : public Plugin, public PreparePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "product-reserve";
  std::string_view name() const override { return kName; }
  void Prepare(Cycle& cycle) const override;
  bool ScoresPod(const Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;
};

// The score of a node of each product, for `workload` over a cluster with `free_gpu_milli` free
// (products with none free are ignored); empty when no pinned shape asks for a product there.
std::map<std::string, double, std::less<>> ProductReserveScores(
    std::span<const WeightedShape> workload, const GpuMilliByProduct& free_gpu_milli);

}  // namespace gpusched

#endif  // GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_
