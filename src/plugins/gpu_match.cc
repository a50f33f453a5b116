#include "gpusched/plugins/gpu_match.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

// The items joined with commas, cut past what a reason shows (Cycle::Reason): a pod's annotation
// may hold 256 KB of them, and a failing node must not cost that.
std::string JoinForReason(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) {
    if (out.size() > kMaxReasonSubjectBytes) break;
    out += (out.empty() ? "" : ",");
    out += std::string_view(i).substr(0, kMaxReasonSubjectBytes + 1);
  }
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The resource whose unit the pod's memory requirement is about: its first GPU resource.
std::string_view PrimaryResource(const Cycle& cycle) {
  return cycle.gpu_demand().empty() ? std::string_view() : cycle.gpu_demand().begin()->name;
}

// Which criteria of `req` the node fails: the first failure's reason, or empty when all hold.
// `met` counts the criteria that hold. A criterion on a fact the node's labels do not give
// (product, family, memory, compute capability, driver or runtime version) fails: a requirement
// is a promise to the pod, and an unknown GPU cannot keep it. Its reason says "unknown", never
// "below": the node may well have enough, and the operator who reads it should add the labels
// (docs/operations.md, "Platforms").
std::string_view Check(const Cycle& cycle, const GpuRequirements& req, const NodeInfo& node,
                       int* met) {
  std::string_view failure;
  // `subject()` runs only for the first failure: most nodes pass or fail on an earlier criterion.
  auto record = [&](bool known, bool ok, std::string_view what, std::string_view unmet,
                    auto subject) {
    if (known && ok) {
      ++*met;
    } else if (failure.empty()) {
      failure = known ? cycle.Reason(unmet, subject())
                      : cycle.Reason(std::string(what) + " unknown; pod requires ", subject());
    }
  };
  const GpuLabels& g = node.gpu;
  if (!req.products.empty()) {
    bool ok = std::any_of(req.products.begin(), req.products.end(),
                          [&](const std::string& glob) { return ProductMatches(glob, g.product); });
    record(!g.product.empty(), ok, "GPU product", "GPU product does not match ",
           [&] { return JoinForReason(req.products); });
  }
  if (!req.families.empty()) {
    bool ok = std::any_of(req.families.begin(), req.families.end(),
                          [&](const std::string& f) { return EqualsIgnoreCase(f, g.family); });
    record(!g.family.empty(), ok, "GPU family", "GPU family not in ",
           [&] { return JoinForReason(req.families); });
  }
  if (req.min_memory_mib) {
    auto memory = UnitMemoryMib(node, PrimaryResource(cycle));
    record(memory.has_value(), memory >= req.min_memory_mib, "GPU memory", "GPU memory below ",
           [&] { return std::to_string(*req.min_memory_mib) + " MiB"; });
  }
  if (req.min_compute_capability) {
    record(g.compute_capability.has_value(), g.compute_capability >= req.min_compute_capability,
           "GPU compute capability", "GPU compute capability below ",
           [&] { return req.min_compute_capability->ToString(); });
  }
  if (req.min_cuda_driver) {
    record(g.driver_version.has_value(), g.driver_version >= req.min_cuda_driver, "CUDA driver",
           "CUDA driver older than ", [&] { return req.min_cuda_driver->ToString(); });
  }
  if (req.min_cuda_runtime) {
    record(g.cuda_runtime_version.has_value(), g.cuda_runtime_version >= req.min_cuda_runtime,
           "CUDA runtime", "CUDA runtime older than ",
           [&] { return req.min_cuda_runtime->ToString(); });
  }
  return failure;
}

// Product costs are relative: any non-negative number up to this.
constexpr double kMaxCost = 1e9;

// Its setting: product globs with their relative costs, in the order written.
struct GpuMatchArgs {
  CostTable costs;

  void Read(SettingsSource& source) {
    if (!source.Has("costs")) return;
    if (auto c = source.NumberMap("costs", 0, kMaxCost)) costs = std::move(*c);
  }
  void Print(SettingsSink& sink) const { sink.NumberMap("costs", costs); }
};

}  // namespace

PluginEntry GpuMatchPlugin::Entry() {
  return PluginEntry{.name = kName,
                     .extends = PointsOf<GpuMatchPlugin>(),
                     .enabled = true,
                     .weight = 1,
                     .keys = {"costs"},
                     .default_config = [] { return std::make_unique<ArgsConfig<GpuMatchArgs>>(); },
                     .top_level_key = "costs",
                     .top_level_as = "costs",
                     .make =
                         [](const PluginConfig* config, const PodIntent& intent) {
                           return std::make_unique<GpuMatchPlugin>(
                               ArgsOf<GpuMatchArgs>(config).costs, intent);
                         }};
}

bool ProductMatches(std::string_view glob, std::string_view product) {
  // The label as GFD writes it ("NVIDIA-L4-SHARED" on a time-sliced node) is what a user copies
  // into a pin; the product without the suffix is what a pin on the GPU itself names.
  if (GlobMatch(glob, product)) return true;
  if (product.ends_with("-SHARED")) product.remove_suffix(7);
  if (GlobMatch(glob, product)) return true;
  // Drivers before about R470 name products without the "NVIDIA " prefix.
  return !product.starts_with("NVIDIA-") && GlobMatch(glob, "NVIDIA-" + std::string(product));
}

Verdict GpuMatchPlugin::Filter(const Cycle& cycle, const NodeState& node) const {
  if (auto unmet = UnmetRequiredPin(cycle.pod().pins, node.info.pin_labels)) {
    return Verdict::Unresolvable(
        unmet->empty()
            ? cycle.Reason("node matches none of the pod's required node affinity terms")
            : cycle.Reason("node label does not match the pod's nodeSelector: ", *unmet));
  }
  const GpuRequirements& req = PodIntentOf(cycle).require;
  if (req.empty()) return Verdict::Pass();
  int met = 0;
  std::string_view failure = Check(cycle, req, node.info, &met);
  return failure.empty() ? Verdict::Pass() : Verdict::Unresolvable(failure);
}

bool GpuMatchPlugin::ScoresPod(const Cycle& cycle) const {
  const PodIntent& intent = PodIntentOf(cycle);
  return !intent.prefer.empty() || (intent.prefer_cheapest && !costs_.empty()) ||
         TotalPreferredPinWeight(cycle.pod().pins) > 0;
}

double GpuMatchPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  double total = 0;
  int parts = 0;
  const GpuRequirements& prefer = PodIntentOf(cycle).prefer;
  if (!prefer.empty()) {
    int met = 0;
    Check(cycle, prefer, node.info, &met);
    total += kMaxNodeScore * met / prefer.criteria();
    ++parts;
  }
  if (PodIntentOf(cycle).prefer_cheapest && !costs_.empty()) {
    double cheapest = std::numeric_limits<double>::max();
    double cost = -1;
    for (const auto& [glob, c] : costs_) {
      cheapest = std::min(cheapest, c);
      if (cost < 0 && ProductMatches(glob, node.info.gpu.product)) cost = c;
    }
    // Unknown products score as the most expensive; a free product scores as the cheapest.
    total += cost < 0 ? 0 : cost == 0 ? kMaxNodeScore : kMaxNodeScore * cheapest / cost;
    ++parts;
  }
  const NodePins& pins = cycle.pod().pins;
  if (int64_t weights = TotalPreferredPinWeight(pins); weights > 0) {
    total += kMaxNodeScore * static_cast<double>(PreferredPinWeight(pins, node.info.pin_labels)) /
             static_cast<double>(weights);
    ++parts;
  }
  return parts ? total / parts : 0;
}

}  // namespace gpusched
