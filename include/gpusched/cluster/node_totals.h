// NodeTotals: what a snapshot sums over all of its nodes (the resources any node offers, and per
// GPU product its whole GPUs and unallocated milli-GPUs), kept by adding and removing one node's
// state at a time. The ledger keeps one beside its published nodes, so a publication that changed
// a few nodes (a drain changes one or two per bind) sums those, not every node of the cluster; a
// snapshot built without one sums its nodes itself, to the same figures
// (NodeTotals::Of, tests/cluster_ledger_test.cc). Not synchronized; Summary() is immutable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/model/node.h"

namespace gpusched {

// Milli-GPUs (nvidia.com/gpu) per nvidia.com/gpu.product.
using GpuMilliByProduct = std::map<std::string, int64_t, std::less<>>;

// The unallocated milli-GPUs of a node (nvidia.com/gpu allocatable minus used), 0 when
// over-committed.
int64_t FreeGpuMilli(const NodeState& node);
// Per product, the unallocated milli-GPUs of `nodes` that offer at least one whole GPU
// (ClusterSnapshot::free_gpu_milli_by_product).
GpuMilliByProduct FreeGpuMilliByProduct(std::span<const std::shared_ptr<const NodeState>> nodes);

// The totals as a snapshot answers them.
struct NodeTotalsSummary {
  // Every resource some node offers (allocatable above 0), sorted.
  std::vector<std::string> offered_resources;
  // Per product, the whole GPUs (nvidia.com/gpu) of the nodes offering at least one.
  std::map<std::string, int64_t, std::less<>> gpus_by_product;
  // Per product, the unallocated milli-GPUs of those nodes (FreeGpuMilli's, summed).
  GpuMilliByProduct free_gpu_milli_by_product;
};

class NodeTotals {
 public:
  // The totals of `nodes`, summed once; without `count_free`, free_gpu_milli_by_product is left
  // empty (a builder that keeps its own, the simulator, needs none).
  static NodeTotalsSummary Of(std::span<const std::shared_ptr<const NodeState>> nodes,
                              bool count_free = true);

  void Add(const NodeState& node) { Apply(node, +1); }
  // `node` must be a state Add()ed before and not removed since.
  void Remove(const NodeState& node) { Apply(node, -1); }
  // The totals now; the same object until the next Add or Remove.
  std::shared_ptr<const NodeTotalsSummary> Summary();

 private:
  // Exact sums, wide enough for any number of nodes at int64's largest amounts (a node's
  // allocatable comes from the API server and may be huge); Summary() clamps them to int64, as
  // the saturating one-pass sums of Of() come out, since every term is at least 0. Saturating here
  // would not undo on Remove.
  using Wide = __int128;
  struct Product {
    int64_t nodes = 0;  // nodes offering at least one whole GPU of the product
    Wide gpus = 0;
    Wide free_milli = 0;
  };
  void Apply(const NodeState& node, int sign);

  std::map<std::string, int64_t, std::less<>> offering_nodes_;  // resource -> nodes offering it
  std::map<std::string, Product, std::less<>> products_;
  std::shared_ptr<const NodeTotalsSummary> summary_;  // null after a change
};

}  // namespace gpusched
