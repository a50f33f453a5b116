#include "gpusched/admission/hard_rule_affinity.h"

#include <algorithm>
#include <optional>
#include <set>
#include <span>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/platform_gpu_labels.h"

namespace gpusched {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

bool HasWildcard(std::string_view glob) {
  return glob.find_first_of("*?") != std::string_view::npos;
}

// GFD's product label values the pins admit: the vocabulary's that match, and a literal pin's own
// spellings (as written, with -SHARED, and without the NVIDIA- prefix old drivers left out).
std::vector<std::string> GfdProducts(const GpuCriteria& c, const LabelVocabulary& vocabulary) {
  std::set<std::string> candidates(vocabulary.products.begin(), vocabulary.products.end());
  for (std::string_view p : KnownPlatformProducts()) {
    candidates.insert(std::string(p));
    candidates.insert(std::string(p) + "-SHARED");
  }
  for (const std::string& glob : *c.products) {
    if (HasWildcard(glob) || glob.empty()) continue;
    candidates.insert(glob);
    candidates.insert(glob + "-SHARED");
    if (glob.starts_with("NVIDIA-") && glob.size() > 7) {
      candidates.insert(glob.substr(7));
      candidates.insert(glob.substr(7) + "-SHARED");
    }
  }
  std::vector<std::string> out;
  for (const std::string& p : candidates) {
    if (c.ProductOk(p)) out.push_back(p);
  }
  return out;
}

// GFD's memory label at or above the floor: in MiB (not divided under MPS, or divided by the
// replicas), or in bytes as GFD 0.4 wrote it (MPS not considered there).
std::vector<AffinityAlternative> GfdMemory(int64_t floor, const LabelVocabulary& vocabulary) {
  std::vector<AffinityAlternative> out;
  PinRequirement mib_cap = Lt(kGfdMemory, kMaxGpuMemoryMib + 1);
  out.push_back({NotIn(kGfdSharing, {"mps"}), Gt(kGfdMemory, floor - 1), mib_cap});
  out.push_back({NotIn(kGfdSharing, {"mps"}),
                 Gt(kGfdMemory, std::max(floor * 1024 * 1024, kMaxGpuMemoryMib + 1) - 1)});
  out.push_back(
      {In(kGfdSharing, {"mps"}), Absent(kGfdReplicas), Gt(kGfdMemory, floor - 1), mib_cap});
  out.push_back(
      {In(kGfdSharing, {"mps"}), Lt(kGfdReplicas, 2), Gt(kGfdMemory, floor - 1), mib_cap});
  for (int64_t r : vocabulary.mps_replicas) {
    if (r < 2 || floor > kMaxGpuMemoryMib / r) continue;
    out.push_back({In(kGfdSharing, {"mps"}), In(kGfdReplicas, {std::to_string(r)}),
                   Gt(kGfdMemory, floor * r - 1), mib_cap});
  }
  return out;
}

std::vector<AffinityAlternative> Gfd(const GpuCriteria& c, const LabelVocabulary& vocabulary) {
  AffinityAlternative product;
  if (c.products) {
    std::vector<std::string> values = GfdProducts(c, vocabulary);
    if (values.empty()) return {};
    product.push_back(In(kGfdProduct, std::move(values)));
  }
  if (!c.min_memory_mib) return {product};
  std::vector<AffinityAlternative> out;
  for (AffinityAlternative m : GfdMemory(*c.min_memory_mib, vocabulary)) {
    m.insert(m.begin(), product.begin(), product.end());
    out.push_back(std::move(m));
  }
  return out;
}

// Whole GPUs not shared: GFD says no time-slicing or MPS and at most one replica, and GKE no
// sharing strategy.
std::vector<AffinityAlternative> Exclusive() {
  AffinityAlternative base = {NotIn(kGfdSharing, {"mps", "time-slicing"}),
                              NotIn(kGkeSharing, {"mps", "time-sharing"})};
  return {Plus(base, {Absent(kGfdReplicas)}), Plus(base, {Lt(kGfdReplicas, 2)})};
}

// The GPU Operator's driver upgrade states (its upgrade controller's state machine) other than
// "upgrade-done", and the device plugin and driver switches that pause them.
constexpr std::string_view kUpgradeStatesInProgress[] = {
    "upgrade-required",          "cordon-required",      "wait-for-jobs-required",
    "pod-deletion-required",     "drain-required",       "node-maintenance-required",
    "post-maintenance-required", "pod-restart-required", "validation-required",
    "uncordon-required",         "upgrade-failed"};
constexpr std::string_view kDriverDeployPaused[] = {"paused-for-driver-upgrade",
                                                    "paused-for-mig-change"};

std::vector<std::string> Union(std::span<const std::string_view> known,
                               const std::vector<std::string>& seen) {
  std::set<std::string> all(known.begin(), known.end());
  all.insert(seen.begin(), seen.end());
  return {all.begin(), all.end()};
}

// The maintenance plugin's refusals, each one requirement every alternative carries: NotIn the
// values it refuses, those the GPU Operator writes and those seen on the cluster's nodes.
AffinityAlternative Maintenance(MaintenanceRule rule, const LabelVocabulary& vocabulary) {
  AffinityAlternative out;
  if (rule == MaintenanceRule::kNone) return out;
  bool in_progress = rule == MaintenanceRule::kBrokenAndInProgress;
  std::vector<std::string> mig = {"failed"};
  if (in_progress) mig = {"failed", "pending", "rebooting"};
  out.push_back(NotIn("nvidia.com/mig.config.state", mig));
  std::vector<std::string> upgrade = {"upgrade-failed"};
  if (in_progress) {
    upgrade = Union(kUpgradeStatesInProgress, vocabulary.upgrade_states);
    std::erase_if(upgrade, [](const std::string& s) { return s.empty() || s == "upgrade-done"; });
  }
  out.push_back(NotIn("nvidia.com/gpu-driver-upgrade-state", upgrade));
  if (in_progress) {
    std::vector<std::string> plugin = Union({{"false", "paused"}}, vocabulary.plugin_deploys);
    std::erase_if(plugin, [](const std::string& s) { return s.empty() || s == "true"; });
    out.push_back(NotIn("nvidia.com/gpu.deploy.device-plugin", plugin));
    std::vector<std::string> driver = Union(kDriverDeployPaused, vocabulary.driver_deploys);
    std::erase_if(driver,
                  [](const std::string& s) { return s.find("paused") == std::string::npos; });
    out.push_back(NotIn("nvidia.com/gpu.deploy.driver", driver));
  }
  std::vector<std::string> invalid;
  for (const std::string& p : vocabulary.products) {
    if (p.ends_with("-MIG-INVALID")) invalid.push_back(p);
  }
  if (!invalid.empty()) out.push_back(NotIn(kGfdProduct, invalid));
  return out;
}

// Whether no node can meet `a`: a label required absent and present, or In values all excluded.
bool Contradicts(const AffinityAlternative& a) {
  for (const PinRequirement& r : a) {
    for (const PinRequirement& s : a) {
      if (r.key != s.key || &r == &s) continue;
      if (r.op == PinOperator::kDoesNotExist && s.op != PinOperator::kDoesNotExist &&
          s.op != PinOperator::kNotIn) {
        return true;
      }
      if (r.op == PinOperator::kIn && s.op == PinOperator::kNotIn &&
          std::all_of(r.values.begin(), r.values.end(), [&](const std::string& v) {
            return std::find(s.values.begin(), s.values.end(), v) != s.values.end();
          })) {
        return true;
      }
      if (r.op == PinOperator::kIn && s.op == PinOperator::kIn &&
          std::none_of(r.values.begin(), r.values.end(), [&](const std::string& v) {
            return std::find(s.values.begin(), s.values.end(), v) != s.values.end();
          })) {
        return true;
      }
    }
  }
  return false;
}

// Every pair of one alternative of `a` and one of `b`, AND-ed; contradictions dropped.
std::vector<AffinityAlternative> Cross(const std::vector<AffinityAlternative>& a,
                                       const std::vector<AffinityAlternative>& b) {
  std::vector<AffinityAlternative> out;
  for (const AffinityAlternative& x : a) {
    for (const AffinityAlternative& y : b) {
      AffinityAlternative both = Plus(x, y);
      if (!Contradicts(both)) out.push_back(std::move(both));
    }
  }
  return out;
}

std::string JoinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// The hard rules no planned node's label carries.
std::vector<std::string> LeftOut(const GpuRequirements& r, bool memory_on_mig) {
  std::vector<std::string> out;
  if (!r.families.empty()) out.push_back("gpu-family " + JoinComma(r.families));
  if (r.min_compute_capability) {
    out.push_back("min-compute-capability " + r.min_compute_capability->ToString());
  }
  if (r.min_cuda_driver) out.push_back("min-cuda-driver " + r.min_cuda_driver->ToString());
  if (r.min_cuda_runtime) out.push_back("min-cuda-runtime " + r.min_cuda_runtime->ToString());
  if (memory_on_mig) out.push_back("min-gpu-memory on a MIG resource");
  return out;
}

}  // namespace

RuleAffinity AffinityForHardRules(const PodIntent& intent, std::string_view resource,
                                  const LabelVocabulary& vocabulary,
                                  const HardRuleOptions& options) {
  const AffinityPlatforms& platforms = options.platforms;
  RuleAffinity out;
  const GpuRequirements& require = intent.require;
  bool mig = !MigProfileOf(resource).empty();
  GpuCriteria c;
  if (!require.products.empty()) {
    c.products = &require.products;
    out.carried.push_back("gpu-product " + JoinComma(require.products));
  }
  if (require.min_memory_mib && !mig) {
    c.min_memory_mib = require.min_memory_mib;
    out.carried.push_back("min-gpu-memory " + std::to_string(*require.min_memory_mib) + "Mi");
  }
  out.left_out = LeftOut(require, require.min_memory_mib && mig);
  bool exclusive = intent.tenancy == GpuTenancy::kExclusive;
  if (exclusive && resource != kGpuResource) {
    if (IsSharedResourceName(resource)) {
      out.unsatisfiable = true;  // refused everywhere by gpusched, whatever the node
      out.carried.push_back("sharing exclusive");
      return out;
    }
    out.left_out.push_back("sharing exclusive on " + std::string(resource));
    exclusive = false;
  }
  if (exclusive) out.carried.push_back("sharing exclusive");
  AffinityAlternative maintenance = Maintenance(options.maintenance, vocabulary);
  if (!maintenance.empty()) {
    out.carried.push_back(options.maintenance == MaintenanceRule::kBrokenOnly
                              ? "maintenance (failed)"
                              : "maintenance");
  }
  if (out.carried.empty()) return out;

  std::vector<AffinityAlternative> gpu;
  if (c.any()) {
    gpu = Gfd(c, vocabulary);
    for (auto& a : PlatformAlternatives(c, platforms)) gpu.push_back(std::move(a));
  } else {
    gpu = {AffinityAlternative{}};
  }
  if (exclusive) gpu = Cross(gpu, Exclusive());
  out.alternatives = Cross(gpu, {maintenance});
  if (out.alternatives.empty()) out.unsatisfiable = true;
  return out;
}

bool AdmitsNode(const std::vector<AffinityAlternative>& alternatives, const Labels& labels) {
  auto find = [&labels](std::string_view key) -> std::optional<std::string_view> {
    std::optional<std::string_view> found;
    for (const auto& [k, v] : labels) {
      if (k == key) found = v;  // a later duplicate wins, as Kubernetes decodes a JSON object
    }
    return found;
  };
  return std::any_of(alternatives.begin(), alternatives.end(), [&](const AffinityAlternative& a) {
    return std::all_of(a.begin(), a.end(), [&](const PinRequirement& r) {
      return PinRequirementHolds(r, find(r.key));
    });
  });
}

}  // namespace gpusched
