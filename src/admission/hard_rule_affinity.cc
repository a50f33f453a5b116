#include "gpusched/admission/hard_rule_affinity.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/platform_gpu_labels.h"
#include "gpusched/plugins/gpu_match.h"

namespace gpusched {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

constexpr std::string_view kGfdProduct = "nvidia.com/gpu.product";
constexpr std::string_view kGfdMemory = "nvidia.com/gpu.memory";
constexpr std::string_view kGfdSharing = "nvidia.com/gpu.sharing-strategy";
constexpr std::string_view kGfdReplicas = "nvidia.com/gpu.replicas";
constexpr std::string_view kGkeAccelerator = "cloud.google.com/gke-accelerator";
constexpr std::string_view kGkePartition = "cloud.google.com/gke-gpu-partition-size";
constexpr std::string_view kGkeSharing = "cloud.google.com/gke-gpu-sharing-strategy";
constexpr std::string_view kKarpenterPrefix = "karpenter.k8s.aws/";
constexpr std::string_view kEksAutoPrefix = "eks.amazonaws.com/";
constexpr std::string_view kAksAccelerator = "kubernetes.azure.com/accelerator";
constexpr std::string_view kInstanceType = "node.kubernetes.io/instance-type";

// GKE's MIG partition sizes (cloud.google.com/gke-gpu-partition-size values).
constexpr std::string_view kGkePartitions[] = {"1g.5gb",  "2g.10gb", "3g.20gb", "4g.20gb",
                                               "7g.40gb", "1g.10gb", "1g.20gb", "2g.20gb",
                                               "3g.40gb", "4g.40gb", "7g.80gb"};

PinRequirement In(std::string_view key, std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return PinRequirement{std::string(key), PinOperator::kIn, std::move(values), 0};
}
PinRequirement NotIn(std::string_view key, std::vector<std::string> values) {
  return PinRequirement{std::string(key), PinOperator::kNotIn, std::move(values), 0};
}
PinRequirement Absent(std::string_view key) {
  return PinRequirement{std::string(key), PinOperator::kDoesNotExist, {}, 0};
}
PinRequirement Gt(std::string_view key, int64_t bound) {
  return PinRequirement{std::string(key), PinOperator::kGt, {}, bound};
}
PinRequirement Lt(std::string_view key, int64_t bound) {
  return PinRequirement{std::string(key), PinOperator::kLt, {}, bound};
}

// What the rules ask of the GPU a node's labels describe.
struct Criteria {
  const std::vector<std::string>* products = nullptr;  // null: no pin
  std::optional<int64_t> min_memory_mib;

  bool any() const { return products || min_memory_mib; }
  bool ProductOk(std::string_view product) const {
    if (!products) return true;
    return !product.empty() &&
           std::any_of(products->begin(), products->end(),
                       [&](const std::string& glob) { return ProductMatches(glob, product); });
  }
  bool Ok(const GpuLabels& g) const {
    return ProductOk(g.product) &&
           (!min_memory_mib || (g.memory_mib && *g.memory_mib >= *min_memory_mib));
  }
};

bool HasWildcard(std::string_view glob) {
  return glob.find_first_of("*?") != std::string_view::npos;
}

// GFD's product label values the pins admit: the vocabulary's that match, and a literal pin's own
// spellings (as written, with -SHARED, and without the NVIDIA- prefix old drivers left out).
std::vector<std::string> GfdProducts(const Criteria& c, const LabelVocabulary& vocabulary) {
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

std::vector<AffinityAlternative> Gfd(const Criteria& c, const LabelVocabulary& vocabulary) {
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

// The guards that leave a platform's alternative to nodes where GFD's labels do not decide.
AffinityAlternative GfdAbsent(const Criteria& c) {
  AffinityAlternative out;
  if (c.products) out.push_back(Absent(kGfdProduct));
  if (c.min_memory_mib) out.push_back(Absent(kGfdMemory));
  return out;
}

AffinityAlternative Plus(AffinityAlternative a, const AffinityAlternative& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// GKE: accelerators by the partition size they are cut into ("" for whole GPUs), each pair judged
// through gpusched's reader.
std::vector<AffinityAlternative> Gke(const Criteria& c) {
  std::map<std::vector<std::string>, std::vector<std::string>> partitions_by_accelerators;
  std::vector<std::string_view> partitions = {""};
  partitions.insert(partitions.end(), std::begin(kGkePartitions), std::end(kGkePartitions));
  for (std::string_view partition : partitions) {
    std::vector<std::string> accelerators;
    for (std::string_view a : KnownGkeAccelerators()) {
      Labels labels = {{kGkeAccelerator, a}};
      if (!partition.empty()) labels.emplace_back(kGkePartition, partition);
      if (c.Ok(ParseGpuLabels(labels))) accelerators.emplace_back(a);
    }
    if (!accelerators.empty()) {
      partitions_by_accelerators[accelerators].emplace_back(partition);
    }
  }
  AffinityAlternative guards = GfdAbsent(c);
  // Under MPS a GPU's memory is split between its clients; GKE's labels give no split to compare.
  if (c.min_memory_mib) guards.push_back(NotIn(kGkeSharing, {"mps"}));
  std::vector<AffinityAlternative> out;
  for (const auto& [accelerators, parts] : partitions_by_accelerators) {
    std::vector<std::string> sizes;
    bool whole = false;
    for (const std::string& p : parts) {
      if (p.empty()) {
        whole = true;
      } else {
        sizes.push_back(p);
      }
    }
    AffinityAlternative base = Plus(guards, {In(kGkeAccelerator, accelerators)});
    if (whole) out.push_back(Plus(base, {Absent(kGkePartition)}));
    if (!sizes.empty()) out.push_back(Plus(base, {In(kGkePartition, sizes)}));
  }
  return out;
}

// Karpenter (or EKS Auto Mode, `prefix`): per GPU name, the memory label's ranges that pass. A
// name whose memory label is absent reads the table's memory; a model sold in two sizes is the
// larger one when the label says more than 1.1x the smaller's memory.
std::vector<AffinityAlternative> Karpenter(const Criteria& c, std::string_view prefix) {
  std::string name_key = std::string(prefix) + "instance-gpu-name";
  std::string memory_key = std::string(prefix) + "instance-gpu-memory";
  std::string maker_key = std::string(prefix) + "instance-gpu-manufacturer";
  // A memory condition: label absent, or within [lo, hi] (hi 0: no upper end).
  struct Range {
    bool absent;
    int64_t lo, hi;
    bool operator<(const Range& o) const {
      return std::tie(absent, lo, hi) < std::tie(o.absent, o.lo, o.hi);
    }
  };
  std::map<std::vector<Range>, std::vector<std::string>> names_by_ranges;
  constexpr int64_t kHuge = kMaxGpuMemoryMib;
  for (std::string_view n : KnownKarpenterGpuNames()) {
    Labels base = {{name_key, n}, {maker_key, "nvidia"}};
    std::vector<Range> ranges;
    GpuLabels bare = ParseGpuLabels(base);
    if (c.Ok(bare)) ranges.push_back({true, 0, 0});
    std::string huge = std::to_string(kHuge);
    Labels with_huge = base;
    with_huge.emplace_back(memory_key, huge);
    GpuLabels large = ParseGpuLabels(with_huge);
    int64_t floor = std::max<int64_t>(c.min_memory_mib.value_or(1), 1);
    if (large.product == bare.product) {
      if (c.ProductOk(bare.product)) ranges.push_back({false, floor, 0});
    } else {
      int64_t threshold = bare.memory_mib.value_or(0) * 11 / 10;
      if (c.ProductOk(bare.product) && floor <= threshold) {
        ranges.push_back({false, floor, threshold});
      }
      if (c.ProductOk(large.product)) ranges.push_back({false, std::max(floor, threshold + 1), 0});
    }
    if (!ranges.empty()) names_by_ranges[ranges].emplace_back(n);
  }
  AffinityAlternative guards = Plus(GfdAbsent(c), {Absent(kGkeAccelerator)});
  if (prefix == kEksAutoPrefix) {
    guards.push_back(Absent(std::string(kKarpenterPrefix) + "instance-gpu-name"));
    guards.push_back(Absent(std::string(kKarpenterPrefix) + "instance-gpu-count"));
  }
  guards.push_back(In(maker_key, {"nvidia"}));
  std::vector<AffinityAlternative> out;
  for (const auto& [ranges, names] : names_by_ranges) {
    AffinityAlternative base = Plus(guards, {In(name_key, names)});
    // Any memory label, or none: the label does not matter.
    if (ranges.size() == 2 && ranges[0].absent && ranges[1].lo <= 1 && ranges[1].hi == 0) {
      out.push_back(std::move(base));
      continue;
    }
    for (const Range& r : ranges) {
      if (r.absent) {
        out.push_back(Plus(base, {Absent(memory_key)}));
        continue;
      }
      AffinityAlternative a = Plus(base, {Gt(memory_key, r.lo - 1)});
      if (r.hi > 0) a.push_back(Lt(memory_key, r.hi + 1));
      out.push_back(std::move(a));
    }
  }
  return out;
}

// AKS: the Azure VM sizes whose GPU passes.
std::vector<AffinityAlternative> Aks(const Criteria& c) {
  std::vector<std::string> sizes;
  for (std::string_view size : KnownAzureGpuSizes()) {
    if (c.Ok(ParseGpuLabels({{kAksAccelerator, "nvidia"}, {kInstanceType, size}}))) {
      sizes.emplace_back(size);
    }
  }
  if (sizes.empty()) return {};
  AffinityAlternative a = GfdAbsent(c);
  for (std::string_view prefix : {kKarpenterPrefix, kEksAutoPrefix}) {
    a.push_back(Absent(std::string(prefix) + "instance-gpu-name"));
    a.push_back(Absent(std::string(prefix) + "instance-gpu-count"));
  }
  a.push_back(Absent(kGkeAccelerator));
  a.push_back(In(kAksAccelerator, {"nvidia"}));
  a.push_back(In(kInstanceType, std::move(sizes)));
  return {std::move(a)};
}

// EKS nodes without Karpenter's labels (managed node groups): the EC2 instance types whose GPU
// passes.
std::vector<AffinityAlternative> Ec2(const Criteria& c) {
  std::vector<std::string> types;
  for (std::string_view type : KnownEc2GpuInstanceTypes()) {
    if (c.Ok(ParseGpuLabels({{kInstanceType, type}}))) types.emplace_back(type);
  }
  if (types.empty()) return {};
  AffinityAlternative a = GfdAbsent(c);
  for (std::string_view prefix : {kKarpenterPrefix, kEksAutoPrefix}) {
    a.push_back(Absent(std::string(prefix) + "instance-gpu-name"));
    a.push_back(Absent(std::string(prefix) + "instance-gpu-count"));
  }
  a.push_back(Absent(kGkeAccelerator));
  a.push_back(NotIn(kAksAccelerator, {"nvidia"}));
  a.push_back(In(kInstanceType, std::move(types)));
  return {std::move(a)};
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
  Criteria c;
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
    auto add = [&gpu](std::vector<AffinityAlternative> more) {
      for (auto& a : more) gpu.push_back(std::move(a));
    };
    if (platforms.gke) add(Gke(c));
    if (platforms.karpenter) {
      add(Karpenter(c, kKarpenterPrefix));
      add(Karpenter(c, kEksAutoPrefix));
    }
    if (platforms.aks) add(Aks(c));
    if (platforms.eks) add(Ec2(c));
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
