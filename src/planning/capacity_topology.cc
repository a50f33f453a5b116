#include "gpusched/planning/capacity_topology.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/util/quote.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

// A whole number within [min, max] spelled in digits alone.
std::optional<int64_t> WholeWithin(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() ||
      text.front() == '-' || v < min || v > max) {
    return std::nullopt;
  }
  return v;
}

// One domain's sums while the level's nodes are read.
struct DomainSums {
  size_t nodes = 0;
  int64_t gpus = 0;
  int64_t free_gpus = 0;
  std::vector<int64_t> pods;  // per shape: its G-GPU pods the domain's nodes take
};

void AddNode(const NodeState& node, size_t index, const std::vector<PodFitsPerNode>& pod_fits,
             DomainSums& sums) {
  ++sums.nodes;
  if (GpuUnitOf(node.info, kGpuResource).kind == GpuUnitKind::kWholeGpu) {
    int64_t gpus =
        std::clamp<int64_t>(node.info.allocatable.units(kGpuResource), 0, kMaxGpusPerNode);
    sums.gpus += gpus;
    sums.free_gpus += std::clamp<int64_t>(node.free_milli(kGpuResource) / 1000, 0, gpus);
  }
  sums.pods.resize(pod_fits.size(), 0);
  for (size_t s = 0; s < pod_fits.size(); ++s) sums.pods[s] += (*pod_fits[s].per_node)[index];
}

// A domain as listed: its name (the label value) quoted.
DomainCapacity ListedDomain(std::string_view name, const DomainSums& sums,
                            const std::vector<GroupShape>& shapes) {
  DomainCapacity d{
      QuoteForMessage(name, kMaxGroupNameBytes), sums.nodes, sums.gpus, sums.free_gpus, {}};
  for (size_t s = 0; s < shapes.size(); ++s) d.fits.push_back(sums.pods[s] / shapes[s].pods);
  return d;
}

void AddInto(DomainCapacity& into, const DomainCapacity& d) {
  into.nodes += d.nodes;
  into.gpus += d.gpus;
  into.free_gpus += d.free_gpus;
  into.fits.resize(d.fits.size(), 0);
  for (size_t s = 0; s < d.fits.size(); ++s) into.fits[s] += d.fits[s];
}

// The level's figures from its domains' sums.
LevelCapacity Summarize(const TopologyIndex& index, size_t level,
                        const std::map<uint32_t, DomainSums>& sums,
                        const std::vector<GroupShape>& shapes,
                        const std::vector<PodFitsPerNode>& pod_fits) {
  const TopologyLevel& l = index.levels()[level];
  LevelCapacity out{QuoteForMessage(l.name), l.keys, sums.size(), 0, {}, {}};
  std::vector<DomainCapacity> domains;
  for (const auto& [domain, s] : sums) {
    domains.push_back(ListedDomain(index.name(level, domain), s, shapes));
  }
  std::stable_sort(domains.begin(), domains.end(), [](const auto& a, const auto& b) {
    return a.free_gpus != b.free_gpus ? a.free_gpus > b.free_gpus : a.name < b.name;
  });
  for (size_t s = 0; s < shapes.size(); ++s) {
    LevelGroupFit g{shapes[s], 0, 0, "", 0, pod_fits[s].capped};
    for (const DomainCapacity& d : domains) {
      g.fit += d.fits[s];
      g.domains_fitting += d.fits[s] > 0;
      if (d.fits[s] > g.largest_fit ||
          (d.fits[s] == g.largest_fit && d.fits[s] > 0 && d.name < g.largest)) {
        g.largest = d.name;
        g.largest_fit = d.fits[s];
      }
    }
    out.groups.push_back(std::move(g));
  }
  for (size_t i = 0; i < domains.size(); ++i) {
    if (i < kMaxListedDomains) {
      out.top_domains.push_back(std::move(domains[i]));
      continue;
    }
    if (i == kMaxListedDomains) out.top_domains.push_back({std::string(kOtherGroup), 0, 0, 0, {}});
    AddInto(out.top_domains.back(), domains[i]);
  }
  return out;
}

}  // namespace

std::string GroupShape::name() const {
  return std::to_string(pods) + "x" + std::to_string(gpus_per_pod);
}

std::string ParseGroupShapes(std::string_view text, std::vector<GroupShape>& shapes) {
  shapes.clear();
  for (const std::string& item : SplitList(text)) {
    const size_t x = item.find('x');
    auto pods = WholeWithin(std::string_view(item).substr(0, x), 1, kMaxGroupPods);
    auto gpus = x == std::string::npos
                    ? std::nullopt
                    : WholeWithin(std::string_view(item).substr(x + 1), 1, kMaxGpusPerNode);
    if (!pods || !gpus) {
      return QuoteForMessage(item, 64) + ": a group shape is PODSxGPUS, PODS within 1.." +
             std::to_string(kMaxGroupPods) + " and GPUS (per pod) within 1.." +
             std::to_string(kMaxGpusPerNode) + ", such as 4x8";
    }
    GroupShape shape{*pods, *gpus};
    if (std::find(shapes.begin(), shapes.end(), shape) != shapes.end()) continue;
    if (shapes.size() == kMaxGroupShapes) {
      return "lists more than " + std::to_string(kMaxGroupShapes) + " group shapes";
    }
    shapes.push_back(shape);
  }
  if (shapes.empty()) return "names no group shape, such as 4x8,16x4";
  return {};
}

const std::vector<GroupShape>& DefaultGroupShapes() {
  static const std::vector<GroupShape> kShapes = [] {
    std::vector<GroupShape> shapes;
    ParseGroupShapes(kDefaultGroupShapes, shapes);
    return shapes;
  }();
  return kShapes;
}

std::optional<std::vector<LevelCapacity>> CapacityByDomain(
    const std::vector<TopologyLevel>& levels, const ClusterSnapshot& snapshot,
    const std::vector<size_t>& gpu_nodes, const std::vector<GroupShape>& shapes,
    const std::vector<PodFitsPerNode>& pod_fits, const Cancellation* cancellation) {
  std::vector<LevelCapacity> out;
  const std::shared_ptr<const TopologyIndex> index = snapshot.TopologyFor(levels);
  for (size_t level = 0; level < levels.size(); ++level) {
    std::map<uint32_t, DomainSums> sums;
    size_t without = 0;
    for (size_t i : gpu_nodes) {
      if (Cancelled(cancellation)) return std::nullopt;
      const uint32_t domain = index->Of(level, i);
      if (domain == TopologyIndex::kNoDomain) {
        ++without;
      } else {
        AddNode(*snapshot.nodes()[i], i, pod_fits, sums[domain]);
      }
    }
    out.push_back(Summarize(*index, level, sums, shapes, pod_fits));
    out.back().nodes_without_domain = without;
  }
  return out;
}

}  // namespace gpusched
