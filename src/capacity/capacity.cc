#include "gpusched/capacity/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "gpusched/capacity/working_nodes.h"
#include "gpusched/codec/json_writer.h"
#include "gpusched/engine/engine.h"
#include "gpusched/metrics/cluster_fragmentation.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

constexpr int64_t kWholeGpuSizes[] = {1, 2, 4, 8};

// Pods of `shape` that `node`'s free units could hold, whatever the plugins say.
int64_t FreeBound(const NodeState& node, const CapacityShape& shape) {
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

// A node's total and allocated GPU equivalents (milli) and shared replicas; idle and fragmented
// come from FragmentationOf over its group.
void AddNodeFigures(const NodeState& node, int64_t& total_milli, int64_t& allocated_milli,
                    GpuFigures& figures) {
  for (const auto& r : node.info.allocatable) {
    int64_t units = std::max<int64_t>(0, r.milli / 1000);
    int64_t used = std::clamp<int64_t>(node.used.units(r.name), 0, units);
    if (r.name == kGpuResource) {
      total_milli += units * 1000;
      allocated_milli += used * 1000;
    } else if (r.name == kSharedGpuResource) {
      figures.shared_replicas += units;
      figures.shared_allocated += used;
    } else if (IsMigSliceResource(r.name)) {
      total_milli += GpuEquivalentMilli(r.name, units);
      allocated_milli += GpuEquivalentMilli(r.name, used);
    }
  }
}

// A group's figures: its nodes as a snapshot of their own with the cluster's workload, so
// FragmentationOf measures them against the very target workload the gauge uses.
GpuFigures FiguresOf(const ClusterSnapshot& snapshot,
                     const std::vector<ClusterSnapshot::NodePtr>& nodes) {
  GpuFigures f;
  int64_t total = 0;
  int64_t allocated = 0;
  for (const auto& n : nodes) AddNodeFigures(*n, total, allocated, f);
  ClusterSnapshot group(nodes, snapshot.generation(), snapshot.observed(),
                        {snapshot.standard_workload().begin(), snapshot.standard_workload().end()});
  ClusterFragmentation frag = FragmentationOf(group);
  f.total = static_cast<double>(total) / 1000;
  f.allocated = static_cast<double>(allocated) / 1000;
  f.idle = frag.idle_gpus;
  f.fragmented = frag.fragmented_gpus;
  return f;
}

// Groups `nodes` (indices into the snapshot) by `key`, with fits counted from `fills`.
std::map<std::string, CapacityGroup> GroupBy(
    const ClusterSnapshot& snapshot, const std::vector<size_t>& gpu_nodes,
    const std::vector<GreedyFill>& fills, const std::function<std::string(const NodeInfo&)>& key) {
  std::map<std::string, std::vector<ClusterSnapshot::NodePtr>> members;
  std::vector<std::string> key_of(snapshot.size());
  for (size_t i : gpu_nodes) {
    key_of[i] = key(snapshot.nodes()[i]->info);
    members[key_of[i]].push_back(snapshot.nodes()[i]);
  }
  std::map<std::string, CapacityGroup> groups;
  for (const auto& [name, nodes] : members) {
    CapacityGroup& g = groups[name];
    g.nodes = nodes.size();
    g.gpus = FiguresOf(snapshot, nodes);
    g.fits.assign(fills.size(), 0);
  }
  for (size_t s = 0; s < fills.size(); ++s) {
    for (size_t i : fills[s].placements) ++groups[key_of[i]].fits[s];
  }
  return groups;
}

std::string Table(const CapacityReport& r, std::string_view heading,
                  const std::map<std::string, CapacityGroup>& groups) {
  std::vector<std::string> header = {
      std::string(heading), "NODES", "TOTAL", "ALLOC", "IDLE", "FRAG", "SHARED"};
  for (const auto& s : r.shapes) header.push_back(s.name);
  std::vector<std::vector<std::string>> rows = {std::move(header)};
  auto add = [&](const std::string& name, const CapacityGroup& g) {
    std::vector<std::string> row = {name,
                                    std::to_string(g.nodes),
                                    FormatGpus(g.gpus.total),
                                    FormatGpus(g.gpus.allocated),
                                    FormatGpus(g.gpus.idle),
                                    FormatGpus(g.gpus.fragmented),
                                    g.gpus.shared_replicas == 0
                                        ? "-"
                                        : std::to_string(g.gpus.shared_allocated) + "/" +
                                              std::to_string(g.gpus.shared_replicas)};
    for (size_t s = 0; s < g.fits.size(); ++s) {
      row.push_back((r.capped[s] ? ">=" : "") + std::to_string(g.fits[s]));
    }
    rows.push_back(std::move(row));
  };
  for (const auto& [name, g] : groups) add(name, g);
  add("all", r.cluster);
  return AlignColumns(rows);
}

// Hundredths, as the table shows them: MIG slices are counted in milli-GPU, rounded down per
// resource, so 7 slices of 1g read 0.994 unrounded.
double Hundredths(double v) { return std::round(v * 100) / 100; }

void GroupJson(JsonWriter& w, const CapacityReport& r, const CapacityGroup& g) {
  w.BeginObject().Key("nodes").Int(static_cast<int64_t>(g.nodes)).Key("gpus").BeginObject();
  w.Key("total").Double(Hundredths(g.gpus.total));
  w.Key("allocated").Double(Hundredths(g.gpus.allocated));
  w.Key("idle").Double(Hundredths(g.gpus.idle));
  w.Key("fragmented").Double(Hundredths(g.gpus.fragmented));
  if (g.gpus.shared_replicas > 0) {
    w.Key("sharedReplicas").Int(g.gpus.shared_replicas);
    w.Key("sharedAllocated").Int(g.gpus.shared_allocated);
  }
  w.EndObject().Key("fits").BeginObject();
  for (size_t s = 0; s < r.shapes.size(); ++s) w.Key(r.shapes[s].name).Int(g.fits[s]);
  w.EndObject();
  if (std::find(r.capped.begin(), r.capped.end(), true) != r.capped.end()) {
    w.Key("capped").BeginArray();
    for (size_t s = 0; s < r.shapes.size(); ++s) {
      if (r.capped[s]) w.String(r.shapes[s].name);
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::vector<CapacityShape> CapacityShapes(const ClusterSnapshot& snapshot) {
  std::vector<CapacityShape> shapes;
  for (int64_t n : kWholeGpuSizes) {
    shapes.push_back({"gpu-" + std::to_string(n), std::string(kGpuResource), n});
  }
  for (const auto& resource : snapshot.offered_resources()) {  // sorted
    if (IsMigSliceResource(resource)) {
      shapes.push_back({"mig-" + std::string(MigProfileOf(resource)), resource, 1});
    }
  }
  if (snapshot.Offers(kSharedGpuResource)) {
    shapes.push_back({"gpu.shared", std::string(kSharedGpuResource), 1});
  }
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

GreedyFill FillGreedily(const Policy& policy, const ClusterSnapshot& snapshot,
                        const CapacityShape& shape, size_t max_placements) {
  GreedyFill fill;
  int64_t free_bound = 0;
  for (const auto& node : snapshot.nodes()) free_bound += FreeBound(*node, shape);
  const size_t bound = std::min(max_placements, static_cast<size_t>(free_bound));
  WorkingNodes nodes(snapshot);
  const PodInfo pod = ShapePod(shape);
  const Policy::Selection selection = policy.Select(pod);
  while (fill.placements.size() < bound) {
    std::optional<size_t> i = BestPlacement(selection, pod, nodes);
    if (!i) break;
    ChargePod(nodes.Mutable(*i), pod);
    fill.placements.push_back(*i);
  }
  fill.capped =
      fill.placements.size() == max_placements && static_cast<int64_t>(max_placements) < free_bound;
  return fill;
}

CapacityReport ComputeCapacity(const Policy& policy, const ClusterSnapshot& snapshot,
                               const CapacityOptions& options) {
  CapacityReport r;
  r.policy_source = policy.spec().source;
  r.shapes = CapacityShapes(snapshot);
  r.profile = std::string(policy.Select(ShapePod(r.shapes.front())).profile);
  r.pool_label = options.pool_label;
  std::vector<GreedyFill> fills;
  for (const auto& shape : r.shapes) {
    fills.push_back(FillGreedily(policy, snapshot, shape, options.max_placements_per_shape));
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
  return r;
}

std::string FormatGpus(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string FormatCapacityText(const CapacityReport& r) {
  std::string out = "capacity of " + (r.inventory.empty() ? "the inventory" : r.inventory) +
                    ", policy " + r.policy_source + " (profile " + r.profile + ")\n";
  out +=
      "GPUs: whole devices plus MIG slices by compute slices (1g = 1/7); FRAG: idle GPUs the "
      "target workload's shapes cannot use (FGD); SHARED: gpu.shared replicas allocated/total\n"
      "fits: more pods of each shape, placed one by one through the policy's engine, each "
      "shape alone\n\n";
  out += Table(r, "PRODUCT", r.products);
  if (!r.pool_label.empty()) out += "\n" + Table(r, "POOL (" + r.pool_label + ")", r.pools);
  return out;
}

std::string FormatCapacityJson(const CapacityReport& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(r.inventory).Key("policy").String(r.policy_source);
  w.Key("profile").String(r.profile).Key("shapes").BeginArray();
  for (const auto& s : r.shapes) {
    w.BeginObject().Key("name").String(s.name).Key("resource").String(s.resource);
    w.Key("count").Int(s.count).EndObject();
  }
  w.EndArray().Key("cluster");
  GroupJson(w, r, r.cluster);
  w.Key("products").BeginObject();
  for (const auto& [name, g] : r.products) {
    w.Key(name);
    GroupJson(w, r, g);
  }
  w.EndObject().Key("poolLabel").String(r.pool_label).Key("pools").BeginObject();
  for (const auto& [name, g] : r.pools) {
    w.Key(name);
    GroupJson(w, r, g);
  }
  w.EndObject().EndObject();
  return out + "\n";
}

void CapacityGaugesOf(const CapacityReport& report, std::vector<CapacityGaugeValue>& gpus,
                      std::vector<CapacityGaugeValue>& fits, size_t max_products) {
  std::vector<const std::pair<const std::string, CapacityGroup>*> order;
  for (const auto& entry : report.products) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.gpus.total > b->second.gpus.total;  // map order: ties by name
  });
  // The gauge's groups: each kept product, then the sum of the rest.
  std::map<std::string, CapacityGroup> groups;
  for (size_t i = 0; i < order.size(); ++i) {
    const CapacityGroup& g = order[i]->second;
    if (i < max_products) {
      groups[order[i]->first] = g;
      continue;
    }
    CapacityGroup& other = groups[std::string(kOtherProduct)];
    other.nodes += g.nodes;
    other.gpus.total += g.gpus.total;
    other.gpus.allocated += g.gpus.allocated;
    other.gpus.idle += g.gpus.idle;
    other.gpus.fragmented += g.gpus.fragmented;
    other.fits.resize(g.fits.size(), 0);
    for (size_t s = 0; s < g.fits.size(); ++s) other.fits[s] += g.fits[s];
  }
  gpus.clear();
  fits.clear();
  for (const auto& [product, g] : groups) {
    gpus.push_back({product, "total", g.gpus.total});
    gpus.push_back({product, "allocated", g.gpus.allocated});
    gpus.push_back({product, "idle", g.gpus.idle});
    gpus.push_back({product, "fragmented", g.gpus.fragmented});
    for (size_t s = 0; s < report.shapes.size() && s < g.fits.size(); ++s) {
      fits.push_back({product, report.shapes[s].name, static_cast<double>(g.fits[s])});
    }
  }
}

}  // namespace gpusched
