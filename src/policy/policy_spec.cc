#include "gpusched/policy/policy_spec.h"

namespace gpusched {

std::map<std::string, PluginSetting, std::less<>> DefaultPluginSettings() {
  // Filter-only plugins have weight 0. Scoring plugins that do not apply to a pod (mig-fit for a
  // pod without MIG requests, gpu-match without preferences) stay out of its weighted mean.
  return {
      {"gpu-fit", {true, 0}},
      {"mig-fit", {true, 1}},
      {"gpu-match", {true, 1}},
      {"sharing", {true, 0}},
      {"maintenance", {true, 0}},
      // Packing: FGD's fragmentation gradient, with a fixed node preference that settles its
      // frequent ties the same way every time (docs/benchmarks.md measures the pair).
      {"fgd", {true, 3}},
      {"consolidate", {true, 1}},
      // In fleets of several products: pods free to choose keep off the products pinned pods
      // need (scores every node alike while no pod pins a product).
      {"product-reserve", {true, 1}},
      // Alternatives a policy may turn on: MostAllocated over the GPU resources, and the FGD
      // paper's baselines.
      {"gpu-binpack", {false, 1}},
      {"best-fit", {false, 1}},
      {"dot-product", {false, 1}},
      {"gpu-packing", {false, 1}},
  };
}

PolicySpec DefaultPolicySpec() {
  PolicySpec spec;
  ProfileSpec profile;
  profile.name = "default";
  profile.plugins = DefaultPluginSettings();
  spec.profiles.push_back(std::move(profile));
  return spec;
}

}  // namespace gpusched
