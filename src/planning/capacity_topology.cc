#include "gpusched/planning/capacity_topology.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/plugins/gang_topology.h"
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

// The gang-topology levels a plugin config prints: `levels` as a list of {name, keys} mappings.
class PrintedLevels : public SettingsSink {
 public:
  void Number(std::string_view, double) override {}
  void Bool(std::string_view, bool) override {}
  void String(std::string_view key, std::string_view value) override {
    if (InLevel() && key == "name") levels.back().name = value;
  }
  void NumberMap(std::string_view, const NamedNumbers&) override {}
  void Strings(std::string_view key, const std::vector<std::string>& values) override {
    if (InLevel() && key == "keys") levels.back().keys = values;
  }
  void BeginMap(std::string_view) override {
    if (in_levels_ && depth_ == 1) levels.emplace_back();
    ++depth_;
  }
  void BeginList(std::string_view key) override {
    if (depth_ == 0) in_levels_ = key == "levels";
    ++depth_;
  }
  void End() override {
    if (--depth_ == 0) in_levels_ = false;
  }

  std::vector<TopologyLevel> levels;

 private:
  bool InLevel() const { return in_levels_ && depth_ == 2 && !levels.empty(); }

  bool in_levels_ = false;
  int depth_ = 0;
};

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

// A domain as listed: its name (DomainOf's "<key index>=<value>") shown as the value alone.
DomainCapacity ListedDomain(const std::string& domain, const DomainSums& sums,
                            const std::vector<GroupShape>& shapes) {
  DomainCapacity d{QuoteForMessage(domain.substr(domain.find('=') + 1), kMaxGroupNameBytes),
                   sums.nodes,
                   sums.gpus,
                   sums.free_gpus,
                   {}};
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
LevelCapacity Summarize(const TopologyLevel& level, const std::map<std::string, DomainSums>& sums,
                        const std::vector<GroupShape>& shapes,
                        const std::vector<PodFitsPerNode>& pod_fits) {
  LevelCapacity out{QuoteForMessage(level.name), level.keys, sums.size(), 0, {}, {}};
  std::vector<DomainCapacity> domains;
  for (const auto& [domain, s] : sums) domains.push_back(ListedDomain(domain, s, shapes));
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

std::vector<TopologyLevel> TopologyLevelsOf(const Policy& policy, std::string_view profile) {
  for (const ProfileSpec& p : policy.spec().profiles) {
    if (p.name != profile) continue;
    auto plugin = p.plugins.find(GangTopologyPlugin::kName);
    if (plugin == p.plugins.end() || !plugin->second.enabled || !plugin->second.config) break;
    PrintedLevels printed;
    plugin->second.config->Print(printed);
    if (!printed.levels.empty()) return printed.levels;
  }
  return DefaultTopologyLevels();
}

std::optional<std::vector<LevelCapacity>> CapacityByDomain(
    const std::vector<TopologyLevel>& levels, const ClusterSnapshot& snapshot,
    const std::vector<size_t>& gpu_nodes, const std::vector<GroupShape>& shapes,
    const std::vector<PodFitsPerNode>& pod_fits, const Cancellation* cancellation) {
  std::vector<LevelCapacity> out;
  for (const TopologyLevel& level : levels) {
    std::map<std::string, DomainSums> sums;
    size_t without = 0;
    for (size_t i : gpu_nodes) {
      if (Cancelled(cancellation)) return std::nullopt;
      const NodeState& node = *snapshot.nodes()[i];
      std::string domain = DomainOf(node.info.topology, level);
      if (domain.empty()) {
        ++without;
      } else {
        AddNode(node, i, pod_fits, sums[domain]);
      }
    }
    out.push_back(Summarize(level, sums, shapes, pod_fits));
    out.back().nodes_without_domain = without;
  }
  return out;
}

}  // namespace gpusched
