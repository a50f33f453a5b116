#include "gpusched/planning/capacity.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "gpusched/cluster/cluster_fragmentation.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/planning/report_rows.h"
#include "gpusched/planning/working_nodes.h"
#include "gpusched/plugins/gang_topology.h"
#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

constexpr int64_t kWholeGpuSizes[] = {1, 2, 4, 8};

// Whether `node` counts for `shape`: an nvidia.com/gpu shape counts only where a unit is of its
// kind (a 2-GPU pod on a time-sliced node gets 2 replicas, not 2 GPUs).
bool CountsOn(const CapacityShape& shape, const NodeInfo& node) {
  return shape.resource != kGpuResource || GpuUnitOf(node, kGpuResource).kind == shape.unit;
}

// Pods of `shape` that `node`'s free units could hold, whatever the plugins say.
int64_t FreeBound(const NodeState& node, const CapacityShape& shape) {
  if (!CountsOn(shape, node.info)) return 0;
  return std::max<int64_t>(0, node.free_milli(shape.resource) / 1000) / shape.count;
}

bool OffersGpu(const NodeInfo& node) {
  for (const auto& r : node.allocatable) {
    if (r.milli > 0 &&
        (r.name == kGpuResource || r.name == kSharedGpuResource || IsMigSliceResource(r.name))) {
      return true;
    }
  }
  return false;
}

// A node's total and allocated physical GPUs (milli), its replicas and its MIG slices. Whole GPUs,
// replicas and slices count up to kMaxGpusPerNode of a resource as IdleOf counts them, so the sums
// stay far from the int64 range; they saturate all the same.
void AddNodeFigures(const NodeState& node, int64_t& total_milli, int64_t& allocated_milli,
                    GpuFigures& figures) {
  for (const auto& r : node.info.allocatable) {
    bool device = r.name == kGpuResource || r.name == kSharedGpuResource;
    bool mig_mixed = IsMigSliceResource(r.name);
    if (!device && !mig_mixed) continue;
    int64_t units = std::max<int64_t>(0, r.milli / 1000);
    int64_t used = std::clamp<int64_t>(node.used.units(r.name), 0, units);
    GpuUnitKind kind = GpuUnitKind::kMigSlice;
    if (device) {
      GpuUnit unit = GpuUnitOf(node.info, r.name);
      kind = r.name == kSharedGpuResource ? GpuUnitKind::kReplica : unit.kind;
      total_milli = SaturatingAdd(total_milli, PhysicalMilli(unit, units));
      allocated_milli = SaturatingAdd(allocated_milli, PhysicalMilli(unit, used));
    } else {
      total_milli = SaturatingAdd(total_milli, GpuEquivalentMilli(r.name, units));
      allocated_milli = SaturatingAdd(allocated_milli, GpuEquivalentMilli(r.name, used));
    }
    units = std::min(units, kMaxGpusPerNode);
    used = std::min(used, kMaxGpusPerNode);
    if (kind == GpuUnitKind::kReplica) {
      figures.shared_replicas = SaturatingAdd(figures.shared_replicas, units);
      figures.shared_allocated = SaturatingAdd(figures.shared_allocated, used);
    } else if (kind == GpuUnitKind::kMigSlice) {
      figures.mig_slices = SaturatingAdd(figures.mig_slices, units);
      figures.mig_slices_allocated = SaturatingAdd(figures.mig_slices_allocated, used);
    }
  }
}

// A group's figures: idle is what is not allocated; the fragment is measured on its nodes as a
// snapshot of their own with the cluster's workload, so FragmentationOf measures them against the
// very target workload the gauge uses (renamed replicas are no part of that measure).
GpuFigures FiguresOf(const ClusterSnapshot& snapshot,
                     const std::vector<ClusterSnapshot::NodePtr>& nodes) {
  GpuFigures f;
  int64_t total = 0;
  int64_t allocated = 0;
  for (const auto& n : nodes) AddNodeFigures(*n, total, allocated, f);
  ClusterSnapshot group(SnapshotParts{.nodes = nodes,
                                      .generation = snapshot.generation(),
                                      .observed_workload = snapshot.observed(),
                                      .standard_workload = {snapshot.standard_workload().begin(),
                                                            snapshot.standard_workload().end()}});
  ClusterFragmentation frag = FragmentationOf(group);
  f.total = static_cast<double>(total) / 1000;
  f.allocated = static_cast<double>(allocated) / 1000;
  f.idle = f.total - f.allocated;
  f.fragmented = std::min(frag.fragmented_gpus, f.idle);
  return f;
}

// Each GPU node's group under `key`, quoted and cut; past kMaxReportGroups names (by most nodes,
// ties by name), kOtherGroup.
std::vector<std::string> GroupNames(const ClusterSnapshot& snapshot,
                                    const std::vector<size_t>& gpu_nodes,
                                    const std::function<std::string(const NodeInfo&)>& key) {
  std::vector<std::string> name_of(snapshot.size());
  std::map<std::string, double> sizes;
  for (size_t i : gpu_nodes) {
    name_of[i] = QuoteForMessage(key(snapshot.nodes()[i]->info), kMaxGroupNameBytes);
    sizes[name_of[i]] += 1;
  }
  if (sizes.size() <= kMaxReportGroups) return name_of;
  const auto listed_as = TopOrOther(sizes, kMaxReportGroups, kOtherGroup);
  for (size_t i : gpu_nodes) name_of[i] = listed_as.at(name_of[i]);
  return name_of;
}

// Groups the GPU nodes (indices into the snapshot) by `key`, with fits counted from `fits`.
std::map<std::string, CapacityGroup> GroupBy(
    const ClusterSnapshot& snapshot, const std::vector<size_t>& gpu_nodes,
    const std::vector<FitCount>& fits, const std::function<std::string(const NodeInfo&)>& key) {
  const std::vector<std::string> name_of = GroupNames(snapshot, gpu_nodes, key);
  std::map<std::string, std::vector<ClusterSnapshot::NodePtr>> members;
  for (size_t i : gpu_nodes) members[name_of[i]].push_back(snapshot.nodes()[i]);
  std::map<std::string, CapacityGroup> groups;
  for (const auto& [name, nodes] : members) {
    CapacityGroup& g = groups[name];
    g.nodes = nodes.size();
    g.gpus = FiguresOf(snapshot, nodes);
    g.fits.assign(fits.size(), 0);
  }
  for (size_t s = 0; s < fits.size(); ++s) {
    for (size_t i : gpu_nodes) groups[name_of[i]].fits[s] += fits[s].per_node[i];
  }
  return groups;
}

// How many pods like `pod` `node` takes one after another, at most `limit`: a copy of the node is
// charged while the filter passes it. `judgements` counts the filter calls.
int64_t TakenBy(const Engine& engine, const Cycle& cycle, const NodeState& node, const PodInfo& pod,
                int64_t limit, size_t& judgements) {
  if (limit <= 0) return 0;
  NodeState work = node;
  const NodeState* one[] = {&work};
  const PodCharge charge = ChargeOf(pod, engine.gpu_names());
  int64_t taken = 0;
  while (taken < limit) {
    ++judgements;
    if (!engine.Filter(cycle, one).front().passed()) break;
    ChargePod(work, charge);
    ++taken;
  }
  return taken;
}

// The group shapes per domain of the policy's levels, from the G-GPU pods each node takes: the
// report's own fill of that pod where it has one, else a fill counted here once per G. nullopt
// when cancelled.
std::optional<std::vector<LevelCapacity>> GroupsByDomain(const Policy& policy,
                                                         const ClusterSnapshot& snapshot,
                                                         const CapacityReport& r,
                                                         const std::vector<FitCount>& fills,
                                                         const std::vector<size_t>& gpu_nodes,
                                                         const CapacityOptions& options) {
  if (options.group_shapes.empty()) return std::vector<LevelCapacity>{};
  std::map<int64_t, FitCount> own_fills;
  std::vector<PodFitsPerNode> pod_fits;
  for (const GroupShape& g : options.group_shapes) {
    const CapacityShape pod{"gpu-" + std::to_string(g.gpus_per_pod), std::string(kGpuResource),
                            g.gpus_per_pod};
    auto same = std::find_if(r.shapes.begin(), r.shapes.end(), [&](const CapacityShape& s) {
      return s.resource == pod.resource && s.count == pod.count && s.unit == pod.unit;
    });
    const FitCount* fill = same == r.shapes.end() ? nullptr : &fills[same - r.shapes.begin()];
    if (!fill) {
      auto [it, added] = own_fills.try_emplace(g.gpus_per_pod);
      if (added) {
        it->second = CountFits(policy, snapshot, pod, options.max_placements_per_shape,
                               options.cancellation);
      }
      if (it->second.cancelled) return std::nullopt;
      fill = &it->second;
    }
    pod_fits.push_back({&fill->per_node, fill->capped});
  }
  const Engine& engine = *policy.Select(ShapePod(r.shapes.front())).engine;
  return CapacityByDomain(GangTopologyLevels(engine), snapshot, gpu_nodes, options.group_shapes,
                          pod_fits, options.cancellation);
}

}  // namespace

std::vector<CapacityShape> CapacityShapes(const ClusterSnapshot& snapshot) {
  std::vector<CapacityShape> shapes;
  for (int64_t n : kWholeGpuSizes) {
    shapes.push_back({"gpu-" + std::to_string(n), std::string(kGpuResource), n});
  }
  size_t mig_shapes = 0;
  for (const auto& resource : snapshot.offered_resources()) {  // sorted
    if (IsMigSliceResource(resource) && mig_shapes++ < kMaxMigShapes) {
      shapes.push_back(
          {"mig-" + QuoteForMessage(MigProfileOf(resource), kMaxGroupNameBytes), resource, 1});
    }
  }
  if (snapshot.Offers(kSharedGpuResource)) {
    shapes.push_back({"gpu.shared", std::string(kSharedGpuResource), 1});
  }
  // One unit of nvidia.com/gpu where it is a replica, and where it is a MIG slice.
  bool replicas = false;
  bool slices = false;
  for (const auto& node : snapshot.nodes()) {
    if (node->info.allocatable.units(kGpuResource) <= 0) continue;
    GpuUnitKind kind = GpuUnitOf(node->info, kGpuResource).kind;
    replicas = replicas || kind == GpuUnitKind::kReplica;
    slices = slices || kind == GpuUnitKind::kMigSlice;
  }
  if (replicas) {
    shapes.push_back({"gpu-replica", std::string(kGpuResource), 1, GpuUnitKind::kReplica});
  }
  if (slices) shapes.push_back({"gpu-slice", std::string(kGpuResource), 1, GpuUnitKind::kMigSlice});
  return shapes;
}

PodInfo ShapePod(const CapacityShape& shape) {
  PodInfo pod;
  pod.name = "capacity-" + shape.name;
  pod.namespace_name = "gpusched-capacity";
  pod.uid = pod.namespace_name + "/" + pod.name;
  pod.phase = PodPhase::kPending;
  pod.requests.Set(shape.resource, shape.count * 1000);
  pod.max_container_requests = pod.requests;
  return pod;
}

FitCount CountFits(const Policy& policy, const ClusterSnapshot& snapshot,
                   const CapacityShape& shape, size_t max_placements,
                   const Cancellation* cancellation) {
  FitCount fits;
  fits.per_node.assign(snapshot.size(), 0);
  int64_t free_bound = 0;
  for (const auto& node : snapshot.nodes()) {
    free_bound = SaturatingAdd(free_bound, FreeBound(*node, shape));
  }
  const PodInfo pod = ShapePod(shape);
  // One cycle for every judgement: nodes are judged without a class, so nothing it keeps about a
  // node outlives a charge.
  const Policy::Judgement judged = policy.Judge(pod, snapshot);
  // What a node of each content class takes; nodes of one class take alike.
  std::vector<std::optional<int64_t>> by_class(snapshot.class_count());
  const int64_t cap =
      static_cast<int64_t>(std::min<size_t>(max_placements, std::numeric_limits<int64_t>::max()));
  int64_t left = cap;
  for (size_t i = 0; i < snapshot.size() && left > 0; ++i) {
    if (Cancelled(cancellation)) {
      fits.cancelled = true;
      return fits;
    }
    const NodeState& node = *snapshot.nodes()[i];
    std::optional<int64_t>& taken = by_class[snapshot.classes()[i]];
    // A class counted under a smaller `left` took all of it, and the loop ends below.
    if (!taken && !CountsOn(shape, node.info)) {
      taken = 0;
    } else if (!taken) {
      taken = TakenBy(judged.engine(), *judged.cycle, node, pod,
                      std::min(left, FreeBound(node, shape)), fits.judgements);
    }
    fits.per_node[i] = std::min(*taken, left);
    fits.total += fits.per_node[i];
    left -= fits.per_node[i];
  }
  fits.capped = fits.total == cap && cap < free_bound;
  return fits;
}

CapacityReport ComputeCapacity(const Policy& policy, const ClusterSnapshot& snapshot,
                               const CapacityOptions& options) {
  CapacityReport r;
  r.policy_source = policy.spec().source;
  r.shapes = CapacityShapes(snapshot);
  r.profile = std::string(policy.Select(ShapePod(r.shapes.front())).profile);
  r.pool_label = options.pool_label;
  std::vector<FitCount> fills;
  for (const auto& shape : r.shapes) {
    fills.push_back(
        CountFits(policy, snapshot, shape, options.max_placements_per_shape, options.cancellation));
    if (fills.back().cancelled) {
      r.cancelled = true;
      return r;
    }
    r.capped.push_back(fills.back().capped);
  }
  std::vector<size_t> gpu_nodes;
  for (size_t i = 0; i < snapshot.size(); ++i) {
    if (OffersGpu(snapshot.nodes()[i]->info)) gpu_nodes.push_back(i);
  }
  auto everything = GroupBy(snapshot, gpu_nodes, fills, [](const NodeInfo&) { return "all"; });
  r.cluster = everything.empty() ? CapacityGroup{0, {}, std::vector<int64_t>(fills.size(), 0)}
                                 : everything.begin()->second;
  r.products = GroupBy(snapshot, gpu_nodes, fills, [](const NodeInfo& node) {
    return node.gpu.product.empty() ? std::string(kNoGroup) : node.gpu.product;
  });
  if (!options.pool_label.empty()) {
    r.pools = GroupBy(snapshot, gpu_nodes, fills, [&](const NodeInfo& node) {
      auto value = node.pin_labels.Find(options.pool_label);
      return value ? std::string(*value) : std::string(kNoGroup);
    });
  }
  auto topology = GroupsByDomain(policy, snapshot, r, fills, gpu_nodes, options);
  if (!topology) {
    r.cancelled = true;
    return r;
  }
  r.topology = std::move(*topology);
  return r;
}

}  // namespace gpusched
