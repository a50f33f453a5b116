#include "gpusched/metrics/cluster_series.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/cluster/cluster_fragmentation.h"
#include "gpusched/cluster/topology_index.h"
#include "gpusched/dra/dra_ledger.h"
#include "gpusched/model/topology.h"

namespace gpusched {
namespace {

// Capacity and allocation per (resource, product), summed over nodes.
struct GpuTotals {
  int64_t capacity_milli = 0;
  int64_t allocated_milli = 0;
};

std::map<std::pair<std::string, std::string>, GpuTotals> TotalsOf(const ClusterSnapshot& snap) {
  std::map<std::pair<std::string, std::string>, GpuTotals> totals;
  for (const auto& node : snap.nodes()) {
    for (const auto& amount : node->info.allocatable) {
      auto& t = totals[{amount.name, node->info.gpu.product}];
      t.capacity_milli += amount.milli;
      t.allocated_milli += node->used.milli(amount.name);
    }
  }
  return totals;
}

// Domains per level in the gauges: the ones with the most free GPUs; the rest as "other".
constexpr size_t kMaxDomainSeries = 32;
constexpr size_t kMaxDomainLabelBytes = 64;

// Free whole GPUs (nvidia.com/gpu) per domain of each default topology level (model/topology.h),
// the kMaxDomainSeries largest per level and the rest summed as "other".
void WriteDomainSeries(const ClusterSnapshot& snap, SeriesWriter& out) {
  auto free = out.Gauge("gpusched_topology_domain_free_gpus",
                        "Unallocated whole GPUs (nvidia.com/gpu) per topology domain of each "
                        "default level, the 32 largest per level, the rest as domain=\"other\"");
  const std::shared_ptr<const TopologyIndex> index = snap.TopologyFor(DefaultTopologyLevels());
  const auto nodes = snap.nodes();
  for (size_t l = 0; l < index->levels().size(); ++l) {
    const TopologyLevel& level = index->levels()[l];
    // By label value: two keys' domains of one value share a series rather than repeat its labels.
    std::map<std::string, int64_t> by_domain;
    for (uint32_t d = 0; d < index->count(l); ++d) {
      int64_t& milli = by_domain[std::string(index->name(l, d).substr(0, kMaxDomainLabelBytes))];
      for (uint32_t i : index->Members(l, d)) milli += FreeGpuMilli(*nodes[i]);
    }
    std::vector<std::pair<int64_t, std::string>> ranked;
    for (auto& [domain, milli] : by_domain) ranked.emplace_back(milli, domain);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    int64_t other = 0;
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (i < kMaxDomainSeries) {
        free.Add({{"level", level.name}, {"domain", ranked[i].second}},
                 static_cast<double>(ranked[i].first / 1000));
      } else {
        other += ranked[i].first;
      }
    }
    if (ranked.size() > kMaxDomainSeries) {
      free.Add({{"level", level.name}, {"domain", "other"}}, static_cast<double>(other / 1000));
    }
  }
}

// Pod groups by state: waiting (no member placed), partial (some of a sized group), placed.
void WriteGroupSeries(const ClusterSnapshot& snap, SeriesWriter& out) {
  int64_t waiting = 0, partial = 0, placed = 0;
  for (const PodGroupState& g : snap.groups().all()) {
    const int32_t n = g.placed();
    if (n == 0) {
      ++waiting;
    } else if (g.size > 0 && n < g.size) {
      ++partial;
    } else {
      ++placed;
    }
  }
  auto groups =
      out.Gauge("gpusched_pod_groups",
                "Pod groups (multi-pod jobs) of the GPU pods known, by state: waiting (no "
                "member placed), partial (some members of a group of known size), placed");
  groups.Add({{"state", "waiting"}}, static_cast<double>(waiting));
  groups.Add({{"state", "partial"}}, static_cast<double>(partial));
  groups.Add({{"state", "placed"}}, static_cast<double>(placed));
}

// What the DRA state holds, against its bounds (dra/dra_ledger.h, dra/dra_entries.h);
// zeros without DRA objects, so the series exist from the start.
void WriteDraSeries(const DraCatalog* held, SeriesWriter& out) {
  static const DraCatalog kNone;
  const DraCatalog& dra = held != nullptr ? *held : kNone;
  out.Gauge("gpusched_dra_claim_bytes",
            "Bytes the ResourceClaims gpusched keeps take, about; past 268435456 a claim is kept "
            "without its requests")
      .Add({}, static_cast<double>(dra.claim_bytes));
  out.Gauge("gpusched_dra_claims", "ResourceClaims gpusched keeps")
      .Add({}, static_cast<double>(dra.claims.size()));
  out.Gauge("gpusched_dra_devices", "DRA devices of complete pools gpusched counts, each once")
      .Add({}, static_cast<double>(dra.device_count));
  out.Gauge("gpusched_dra_device_kinds",
            "Kinds of DRA GPU devices told apart (at most 512: past them claims are unmodelled)")
      .Add({}, static_cast<double>(dra.device_kinds.size()));
}

}  // namespace

void WriteClusterSeries(const ClusterSnapshot& snap, SeriesWriter& out) {
  WriteDomainSeries(snap, out);
  WriteGroupSeries(snap, out);
  out.Gauge("gpusched_inventory_nodes", "Nodes in the inventory")
      .Add({}, static_cast<double>(snap.size()));
  int64_t gpu_pods = 0;
  int64_t pods = 0;
  for (const auto& node : snap.nodes()) {
    gpu_pods += node->gpu_pod_count;
    pods += node->pod_count;
  }
  out.Gauge("gpusched_inventory_bound_pods",
            "Bound, non-terminal pods whose requests count against their nodes")
      .Add({}, static_cast<double>(pods));
  out.Gauge("gpusched_inventory_gpu_pods", "Bound, non-terminal pods that request GPU resources")
      .Add({}, static_cast<double>(gpu_pods));
  auto capacity = out.Gauge("gpusched_cluster_gpu_capacity",
                            "Allocatable units of each GPU resource, per GPU product");
  auto allocated = out.Gauge("gpusched_cluster_gpu_allocated",
                             "Units of each GPU resource requested by bound pods, per GPU product");
  for (const auto& [key, t] : TotalsOf(snap)) {
    SeriesLabels labels{{"resource", key.first}, {"product", key.second}};
    capacity.Add(labels, static_cast<double>(t.capacity_milli) / 1000);
    allocated.Add(labels, static_cast<double>(t.allocated_milli) / 1000);
  }
  WriteDraSeries(snap.dra(), out);
  ClusterFragmentation frag = FragmentationOf(snap);
  out.Gauge("gpusched_cluster_gpu_fragmentation_gpus",
            "Idle whole GPUs (nvidia.com/gpu) that the observed GPU workload could not use "
            "(the packing benchmark's fragmentation measure)")
      .Add({}, frag.fragmented_gpus);
  out.Gauge("gpusched_cluster_gpu_fragmentation_ratio",
            "gpusched_cluster_gpu_fragmentation_gpus over the idle GPUs (0 when none is idle)")
      .Add({}, frag.idle_gpus > 0 ? frag.fragmented_gpus / frag.idle_gpus : 0);
}

}  // namespace gpusched
