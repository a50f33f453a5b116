#include "gpusched/sim/sim_policy.h"

#include "gpusched/plugins/gang_topology.h"
#include "gpusched/plugins/packing_scores.h"

namespace gpusched {
namespace {

// A profile that judges every pod, filters with the default filters and scores only with
// `scorer` (none: every feasible node ties and the pick is random).
std::shared_ptr<const Policy> PackingPolicy(std::string_view scorer) {
  PolicySpec spec = DefaultPolicySpec();
  spec.source = "packing benchmark: " + std::string(scorer.empty() ? "no score" : scorer);
  ProfileSpec& profile = spec.profiles[0];
  for (auto& [name, setting] : profile.plugins) {
    setting.weight = 0;
    // The paper's baselines place pods one by one: no job-level rule of gpusched's.
    if (name == GangTopologyPlugin::kName) setting.enabled = false;
    if (name == scorer) {
      setting.enabled = true;
      setting.weight = 1;
    }
  }
  return std::make_shared<const Policy>(std::move(spec), "built-in");
}

bool EnablesFgd(const Policy& policy) {
  const ProfileSpec* profile = nullptr;
  for (const auto& p : policy.spec().profiles) {
    if (p.name == policy.spec().default_profile) profile = &p;
  }
  if (!profile) return false;
  auto it = profile->plugins.find(FgdPlugin::kName);
  return it != profile->plugins.end() && it->second.enabled && it->second.weight > 0;
}

}  // namespace

const std::vector<std::string>& BuiltinSimPolicyNames() {
  static const std::vector<std::string> kNames = {
      "random",      "least-allocated", "most-allocated",
      "dot-product", "gpu-packing",     "best-fit",
      "fgd",         "gpusched",        "none"};
  return kNames;
}

std::optional<SimPolicy> BuiltinSimPolicy(const std::string& name) {
  if (name == "none") {
    return SimPolicy{name, nullptr, InTreeScore::kNone, DeviceChoice::kBestFit, TieBreak::kPerPod};
  }
  if (name == "random") {
    return SimPolicy{name, PackingPolicy(""), InTreeScore::kNone, DeviceChoice::kRandom,
                     TieBreak::kPerPod};
  }
  if (name == "least-allocated") {
    return SimPolicy{name, PackingPolicy(""), InTreeScore::kLeastAllocated, DeviceChoice::kBestFit,
                     TieBreak::kNodeOrder};
  }
  if (name == "most-allocated") {
    return SimPolicy{name, PackingPolicy(""), InTreeScore::kMostAllocated, DeviceChoice::kBestFit,
                     TieBreak::kNodeOrder};
  }
  for (std::string_view scorer :
       {BestFitPlugin::kName, DotProductPlugin::kName, GpuPackingPlugin::kName, FgdPlugin::kName}) {
    if (name == scorer) {
      return SimPolicy{name, PackingPolicy(scorer), InTreeScore::kNone,
                       scorer == FgdPlugin::kName ? DeviceChoice::kFgd : DeviceChoice::kBestFit,
                       TieBreak::kNodeOrder};
    }
  }
  if (name == "gpusched") {
    return SimPolicyOf(name, std::make_shared<const Policy>(DefaultPolicySpec()));
  }
  return std::nullopt;
}

SimPolicy SimPolicyOf(std::string name, std::shared_ptr<const Policy> policy) {
  DeviceChoice devices = EnablesFgd(*policy) ? DeviceChoice::kFgd : DeviceChoice::kBestFit;
  return SimPolicy{std::move(name), std::move(policy), InTreeScore::kNone, devices,
                   TieBreak::kNodeOrder};
}

}  // namespace gpusched
