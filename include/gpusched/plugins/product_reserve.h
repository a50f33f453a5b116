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
// the same however full it gets.
//
// Pins are learned from the watch, so the first pods of a workload are placed before any pin is
// seen. Until enough are, a prior weighs in: every product as needed as its share of all GPUs,
// which keeps the products filling in step (100 x the lowest GPUs/free ratio over the product's).
// The two are blended as fgd's target workload is: the prior's share is priorPods / (priorPods +
// pods seen). Pods that ask for no GPU are not scored; neither is any pod in a fleet of one
// product. Prepare computes the per-product scores once per cycle.
#ifndef GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_
#define GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_

#include <map>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

// Whole GPUs per product (ClusterSnapshot::gpus_by_product).
using GpusByProduct = std::map<std::string, int64_t, std::less<>>;

// How many pods the prior weighs like: a few, so the first pins seen soon outweigh it (measured on
// issue #36's affinity scenarios, docs/plugins.md).
inline constexpr double kProductReservePriorPods = 4;

struct ProductReserveInputs {
  std::span<const WeightedShape> workload;  // the observed shapes, weights summing to 1
  double observed_pods = 0;                 // how many pods (decayed) those weights stand for
  const GpusByProduct& gpus;                // every product's GPUs
  const GpuMilliByProduct& free_gpu_milli;  // every product's free milli-GPUs
  double prior_pods = kProductReservePriorPods;
};

class ProductReservePlugin : public Plugin, public PreparePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "product-reserve";
  explicit ProductReservePlugin(double prior_pods = kProductReservePriorPods)
      : prior_pods_(prior_pods) {}
  // On by default, weight 2; setting `priorPods` (how many pods the prior weighs like).
  static PluginEntry Entry();
  std::string_view name() const override { return kName; }
  void Prepare(Cycle& cycle) const override;
  bool ScoresPod(const Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  double prior_pods_;
};

// The score of a node of each product with free GPUs; empty with fewer than two products, or when
// neither side of the blend has anything to say.
std::map<std::string, double, std::less<>> ProductReserveScores(const ProductReserveInputs& in);
}  // namespace gpusched

#endif  // GPUSCHED_PLUGINS_PRODUCT_RESERVE_H_
