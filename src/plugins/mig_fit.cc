#include "gpusched/plugins/mig_fit.h"

#include <algorithm>
#include <set>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

// 100 * (1 - stranded / capacity) on a node whose MIG slices are resources `mig-*`.
double MixedBestFit(const NodeState& node, std::string_view wanted, int64_t count) {
  int wanted_slices = MigComputeSlices(MigProfileOf(wanted));
  double stranded = 0;
  double capacity = 0;
  for (const auto& r : node.info.allocatable) {
    std::string_view profile = MigProfileOf(r.name);
    if (profile.empty() || r.milli <= 0) continue;
    int slices = std::max(1, MigComputeSlices(profile));
    double factor = slices > wanted_slices ? 2 : 1;
    int64_t free_units = std::max<int64_t>(0, r.milli / 1000 - node.used.units(r.name));
    if (r.name == wanted) free_units = std::max<int64_t>(0, free_units - count);
    stranded += static_cast<double>(free_units) * slices * factor;
    capacity += static_cast<double>(r.milli / 1000) * slices * factor;
  }
  return capacity > 0 ? kMaxNodeScore * (1 - stranded / capacity) : 0;
}

// Best fit in units of one resource: 100 * (1 - free_after / allocatable).
double UnitBestFit(const NodeState& node, std::string_view resource, int64_t count) {
  int64_t allocatable = node.info.allocatable.units(resource);
  if (allocatable <= 0) return 0;
  int64_t free_after = std::max<int64_t>(0, allocatable - node.used.units(resource) - count);
  return kMaxNodeScore * (1 - static_cast<double>(free_after) / static_cast<double>(allocatable));
}

constexpr std::string_view kMigFitKey = "mig-fit";

// The MIG profiles some node offers, sorted: mixed-strategy slices (nvidia.com/mig-<profile>
// resources) and single-strategy GPUs (nvidia.com/gpu on a node whose product names a profile).
using OfferedProfiles = CycleValue<std::vector<std::string>>;

std::vector<std::string> ProfilesOffered(const ClusterSnapshot& snapshot) {
  std::set<std::string, std::less<>> profiles;
  // Only the MIG resources, a range of the sorted names: a cluster may offer many other ones.
  const std::vector<std::string>& offered = snapshot.offered_resources();
  for (auto it = std::lower_bound(offered.begin(), offered.end(), kMigResourcePrefix);
       it != offered.end() && it->starts_with(kMigResourcePrefix); ++it) {
    if (std::string_view p = MigProfileOf(*it); !p.empty()) profiles.emplace(p);
  }
  for (const auto& [product, gpus] : snapshot.gpus_by_product()) {
    if (std::string_view p = MigProfileOfProduct(product); !p.empty() && gpus > 0) {
      profiles.emplace(p);
    }
  }
  return {profiles.begin(), profiles.end()};
}

bool AsksForMigProduct(const Cycle& cycle) {
  const auto& products = PodIntentOf(cycle).require.products;
  return !products.empty() && std::all_of(products.begin(), products.end(), [](const auto& p) {
    return p.find("-MIG-") != std::string::npos;
  });
}

}  // namespace

void MigFitPlugin::Prepare(Cycle& cycle) const {
  PreparePodIntent(cycle, profile_intent_);
  for (const auto& want : cycle.gpu_demand()) {
    if (MigProfileOf(want.name).empty()) continue;
    cycle.Put(kMigFitKey, std::make_unique<OfferedProfiles>(ProfilesOffered(cycle.snapshot())));
    return;
  }
}

Verdict MigFitPlugin::Filter(const Cycle& cycle, const NodeState&) const {
  const OfferedProfiles* prepared = cycle.Get<OfferedProfiles>(kMigFitKey);
  if (prepared == nullptr) return Verdict::Pass();  // the pod asks for no MIG slice
  const std::vector<std::string>& offered = prepared->value;
  for (const auto& want : cycle.gpu_demand()) {
    std::string_view profile = MigProfileOf(want.name);
    if (profile.empty() || std::binary_search(offered.begin(), offered.end(), profile)) continue;
    std::string list;
    for (const auto& p : offered) list += (list.empty() ? "" : ", ") + p;
    return Verdict::Unresolvable(
        cycle.Reason("no node offers MIG profile ",
                     std::string(profile) + "; offered: " + (list.empty() ? "none" : list)));
  }
  return Verdict::Pass();
}

bool MigFitPlugin::ScoresPod(const Cycle& cycle) const {
  for (const auto& want : cycle.gpu_demand()) {
    if (!MigProfileOf(want.name).empty()) return true;
  }
  return cycle.gpu_demand().contains(kGpuResource) && AsksForMigProduct(cycle);
}

double MigFitPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  double total = 0;
  int parts = 0;
  for (const auto& want : cycle.gpu_demand()) {
    int64_t count = want.milli / 1000;
    if (!MigProfileOf(want.name).empty()) {
      total += MixedBestFit(node, want.name, count);
      ++parts;
    } else if (want.name == kGpuResource) {
      total += UnitBestFit(node, want.name, count);
      ++parts;
    }
  }
  return parts ? total / parts : 0;
}

}  // namespace gpusched
