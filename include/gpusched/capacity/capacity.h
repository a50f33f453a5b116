// capacity: what fits in a cluster right now, per GPU product and per node pool.
//
// GPU figures count GPU equivalents: whole nvidia.com/gpu units plus MIG slices by their compute
// slices (a 1g slice is 1/7 GPU), the terms of the fragmentation gauge (FragmentationOf,
// gpusched/metrics/cluster_fragmentation.h), which gives `idle` and `fragmented` (FGD's measure
// against the default policy's target workload). `allocated` is what bound pods hold, each
// resource counted up to its allocatable, so total = allocated + idle. Time-sliced replicas
// (nvidia.com/gpu.shared) are no GPUs here and are counted apart, as replicas.
//
// Fits: how many more pods of each standard shape (CapacityShapes) fit, each shape counted alone
// from the current state. A shape is placed greedily, one synthetic pod at a time, through the
// engine of the profile the policy selects for it, as the verbs judge a pod: Engine::Filter over
// every node, Engine::Prioritize over those that pass, the pod charged to the best-scored node
// (the first in snapshot order among equals), until no node passes. Each placement counts for its
// node's product and pool. The work is bounded by the input: at most the free units of the
// shape's resource allow (a node holds at most floor(free / units per pod) pods), and at most
// `max_placements_per_shape` (kMaxPlacementsPerShape), past which a count is a lower bound
// (CapacityReport::capped). A placement judges every node once, a content class of unchanged
// nodes once (Candidates), so a shape costs at most placements x nodes plugin calls.
//
// Pure functions over an immutable snapshot and policy; thread-safe. Never run on a verb's thread:
// a large cluster takes seconds.
#ifndef GPUSCHED_CAPACITY_CAPACITY_H_
#define GPUSCHED_CAPACITY_CAPACITY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/model/pod.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// Placements per shape at most: 10,000 pods is more than 1,000 nodes of 8 GPUs hold.
inline constexpr size_t kMaxPlacementsPerShape = 10000;
// The group of nodes without the pool label, and of GPU nodes without a product label.
inline constexpr std::string_view kNoGroup = "(none)";

// One standard pod shape: `count` units of `resource`.
struct CapacityShape {
  std::string name;  // gpu-1, gpu-2, gpu-4, gpu-8, mig-<profile>, gpu.shared
  std::string resource;
  int64_t count = 1;
};

// The shapes counted for `snapshot`: 1, 2, 4 and 8 whole GPUs; one slice of every MIG profile
// some node offers (nvidia.com/mig-<profile>, sorted); one replica of nvidia.com/gpu.shared where
// some node offers it.
std::vector<CapacityShape> CapacityShapes(const ClusterSnapshot& snapshot);

// The synthetic pod of `shape`: pending, no annotations, requesting only the shape.
PodInfo ShapePod(const CapacityShape& shape);

// A greedy fill of one shape: the node (index into snapshot.nodes()) of each placement, in order.
struct GreedyFill {
  std::vector<size_t> placements;
  bool capped = false;  // stopped at max_placements while the free units allowed more
};
GreedyFill FillGreedily(const Policy& policy, const ClusterSnapshot& snapshot,
                        const CapacityShape& shape, size_t max_placements = kMaxPlacementsPerShape);

// GPU equivalents (see the top of this file); replicas in units.
struct GpuFigures {
  double total = 0;
  double allocated = 0;
  double idle = 0;
  double fragmented = 0;
  int64_t shared_replicas = 0;  // nvidia.com/gpu.shared allocatable
  int64_t shared_allocated = 0;
};

struct CapacityGroup {
  size_t nodes = 0;
  GpuFigures gpus;
  std::vector<int64_t> fits;  // per CapacityReport::shapes
};

struct CapacityOptions {
  std::string pool_label;  // empty: no pools
  size_t max_placements_per_shape = kMaxPlacementsPerShape;
};

struct CapacityReport {
  std::string inventory;  // where the snapshot came from, for the heading; set by the caller
  std::string policy_source;
  std::string profile;  // of the first shape's pod (every shape's pod has no annotation)
  std::vector<CapacityShape> shapes;
  std::vector<bool> capped;                       // per shape: its fits are lower bounds
  CapacityGroup cluster;                          // every node offering a GPU resource
  std::map<std::string, CapacityGroup> products;  // by nvidia.com/gpu.product
  std::string pool_label;
  std::map<std::string, CapacityGroup> pools;  // by the pool label's value; empty without one
};

// The report for `snapshot` under `policy`. Nodes that offer no GPU resource (nvidia.com/gpu,
// MIG slices, nvidia.com/gpu.shared) are left out of every group. The pool label is read from the
// labels gpusched keeps of a node (IsPinLabel: nvidia.com/ labels); nodes without it go to
// kNoGroup.
CapacityReport ComputeCapacity(const Policy& policy, const ClusterSnapshot& snapshot,
                               const CapacityOptions& options = {});

// A GPU figure as the reports print it: up to two decimals, trailing zeros dropped (12, 2.5, 0.14).
std::string FormatGpus(double v);

// A table per grouping (products, then pools), then the cluster's line.
std::string FormatCapacityText(const CapacityReport& report);
// One JSON object: {"inventory", "policy", "profile", "shapes": [...], "cluster": G, "products":
// {name: G}, "poolLabel", "pools": {value: G}}, G = {"nodes", "gpus": {"total", "allocated",
// "idle", "fragmented"[, "sharedReplicas", "sharedAllocated"]}, "fits": {shape: N}[, "capped":
// [shape...]]}.
std::string FormatCapacityJson(const CapacityReport& report);

// Products with a label of their own in the capacity gauges; the others are summed as
// kOtherProduct, so a gauge has at most (kMaxGaugeProducts + 1) x shapes series.
inline constexpr size_t kMaxGaugeProducts = 32;
inline constexpr std::string_view kOtherProduct = "other";
// The gauges gpusched_capacity_gpus{product,state} and gpusched_capacity_fits{product,shape} of
// `report`: the `max_products` products with the most GPUs (ties by name) by name, the rest summed
// under kOtherProduct.
void CapacityGaugesOf(const CapacityReport& report, std::vector<CapacityGaugeValue>& gpus,
                      std::vector<CapacityGaugeValue>& fits,
                      size_t max_products = kMaxGaugeProducts);

}  // namespace gpusched

#endif  // GPUSCHED_CAPACITY_CAPACITY_H_
