// product-reserve: in a fleet of several GPU products, a GPU pod that may use more than one of
// them prefers the product that keeps the most room for the pods pinned to products.
//
// share(P) = the GPUs per task that the pinned shapes of the observed workload (every shape seen,
// rare ones included: a rare pod may ask for many GPUs) ask of P, over the GPUs per task of every
// GPU shape (a shape accepting k of the products with free GPUs counts 1/k on each): the part of
// what arrives that only P can take. If the fleet fills, pinned pods take share(P) x the fleet's
// free GPUs of P, and slack(P) = P's free GPUs - that is what P keeps for pods free to choose.
// Score = 100 x (1 - (highest slack - slack(P)) / P's free GPUs), within 0..100. A difference,
// not a ratio: a product few pins have asked for but with little room left is still the one a few
// more pins overflow (issue #36: free pods filled the L4s while the early pins said A100).
//
// Pins are learned from the watch, so the first pods of a workload are placed before many pins
// are seen. A prior weighs in, blended as fgd's target workload is (its part: priorPods /
// (priorPods + pods seen)): before any pin, every product needed as its share of all GPUs, which
// keeps the products filling in step (blended with no preference, 100); once pins are seen, the
// pinned part of the workload spread over the products as their GPUs are. Pods that ask for no
// GPU are not scored; neither is any pod in a fleet of one product. Prepare computes the
// per-product scores once per cycle.
#pragma once

#include <map>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

// Whole GPUs per product (ClusterSnapshot::gpus_by_product).
using GpusByProduct = std::map<std::string, int64_t, std::less<>>;

// How many pods the prior weighs like: enough that a few early pins do not decide alone, few
// enough that a workload pinning one product heavily is believed early (measured on issue #36's
// affinity scenarios, docs/plugins.md).
inline constexpr double kProductReservePriorPods = 16;

struct ProductReserveInputs {
  std::span<const WeightedShape> workload;  // the observed shapes, weights summing to 1
  double observed_pods = 0;                 // how many pods (decayed) those weights stand for
  const GpusByProduct& gpus;                // every product's GPUs
  const GpuMilliByProduct& free_gpu_milli;  // every product's free milli-GPUs
  double prior_pods = kProductReservePriorPods;
};

class ProductReservePlugin : public NamedPlugin<ProductReservePlugin>,
                             public PreparePlugin,
                             public ScorePlugin {
 public:
  static constexpr std::string_view kName = "product-reserve";
  explicit ProductReservePlugin(double prior_pods = kProductReservePriorPods)
      : prior_pods_(prior_pods) {}
  // On by default, weight 2; setting `priorPods` (how many pods the prior weighs like).
  static PluginEntry Entry();
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
