#include "gpusched/cluster/node_totals.h"

#include <algorithm>
#include <limits>
#include <set>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/util/quantity.h"

namespace gpusched {

int64_t FreeGpuMilli(const NodeState& node) {
  return std::max<int64_t>(0, node.free_milli(kGpuResource));
}

GpuMilliByProduct FreeGpuMilliByProduct(std::span<const std::shared_ptr<const NodeState>> nodes) {
  GpuMilliByProduct free;
  for (const auto& n : nodes) {
    if (n->info.allocatable.milli(kGpuResource) < kMilliPerGpu) continue;
    int64_t& sum = free[n->info.gpu.product];
    sum = SaturatingAdd(sum, FreeGpuMilli(*n));
  }
  return free;
}

NodeTotalsSummary NodeTotals::Of(std::span<const std::shared_ptr<const NodeState>> nodes,
                                 bool count_free) {
  NodeTotalsSummary out;
  std::set<std::string, std::less<>> offered;
  for (const auto& n : nodes) {
    for (const auto& r : n->info.allocatable) {
      if (r.milli > 0 && !offered.contains(r.name)) offered.emplace(r.name);
    }
    int64_t gpus = n->info.allocatable.milli(kGpuResource) / kMilliPerGpu;
    if (gpus > 0) {
      int64_t& total = out.gpus_by_product[n->info.gpu.product];
      total = SaturatingAdd(total, gpus);
    }
  }
  out.offered_resources.assign(offered.begin(), offered.end());
  if (count_free) out.free_gpu_milli_by_product = FreeGpuMilliByProduct(nodes);
  return out;
}

void NodeTotals::Apply(const NodeState& node, int sign) {
  summary_.reset();
  for (const auto& r : node.info.allocatable) {
    if (r.milli <= 0) continue;
    auto it = offering_nodes_.try_emplace(r.name, 0).first;
    if ((it->second += sign) == 0) offering_nodes_.erase(it);
  }
  int64_t gpus = node.info.allocatable.milli(kGpuResource) / kMilliPerGpu;
  if (gpus <= 0) return;
  auto it = products_.try_emplace(node.info.gpu.product).first;
  Product& p = it->second;
  p.nodes += sign;
  p.gpus += sign * Wide{gpus};
  p.free_milli += sign * Wide{FreeGpuMilli(node)};
  if (p.nodes == 0) products_.erase(it);
}

namespace {

int64_t ClampedToInt64(__int128 v) {
  return static_cast<int64_t>(std::min<__int128>(v, std::numeric_limits<int64_t>::max()));
}

}  // namespace

std::shared_ptr<const NodeTotalsSummary> NodeTotals::Summary() {
  if (summary_) return summary_;
  auto out = std::make_shared<NodeTotalsSummary>();
  out->offered_resources.reserve(offering_nodes_.size());
  for (const auto& [name, nodes] : offering_nodes_) out->offered_resources.push_back(name);
  for (const auto& [product, p] : products_) {
    out->gpus_by_product.emplace(product, ClampedToInt64(p.gpus));
    out->free_gpu_milli_by_product.emplace(product, ClampedToInt64(p.free_milli));
  }
  summary_ = std::move(out);
  return summary_;
}

}  // namespace gpusched
