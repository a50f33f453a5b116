#include "gpusched/model/gpu_labels.h"

#include <algorithm>
#include <charconv>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/platform_gpu_labels.h"

namespace gpusched {
namespace {

constexpr std::string_view kNvidia = "nvidia.com/";
constexpr std::string_view kMigLabelPrefix = "nvidia.com/mig-";

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A GPU memory label: MiB, or bytes when larger than any GPU's memory in MiB (old GFD releases).
std::optional<int64_t> MemoryLabelMib(std::string_view s) {
  std::optional<int64_t> v = ParseInt(s);
  if (!v || *v < 0) return std::nullopt;
  return *v > kMaxGpuMemoryMib ? *v / (1024 * 1024) : *v;
}

std::optional<Version> JoinVersion(std::string_view major, std::string_view minor,
                                   std::string_view rev) {
  if (major.empty()) return std::nullopt;
  std::string text(major);
  if (!minor.empty()) text += "." + std::string(minor);
  if (!minor.empty() && !rev.empty()) text += "." + std::string(rev);
  return Version::Parse(text);
}

SharingStrategy ParseSharing(std::string_view s) {
  if (s == "none") return SharingStrategy::kNone;
  if (s == "time-slicing") return SharingStrategy::kTimeSlicing;
  if (s == "mps") return SharingStrategy::kMps;
  return SharingStrategy::kUnknown;
}

MigStrategy ParseMigStrategy(std::string_view s) {
  if (s == "none") return MigStrategy::kNone;
  if (s == "single") return MigStrategy::kSingle;
  if (s == "mixed") return MigStrategy::kMixed;
  return MigStrategy::kUnknown;
}

MigConfigState ParseMigConfigState(std::string_view s) {
  if (s == "pending") return MigConfigState::kPending;
  if (s == "rebooting") return MigConfigState::kRebooting;
  if (s == "success") return MigConfigState::kSuccess;
  if (s == "failed") return MigConfigState::kFailed;
  return MigConfigState::kUnknown;
}

MigProfileLabels& ProfileEntry(std::vector<MigProfileLabels>& profiles, std::string_view name) {
  for (auto& p : profiles) {
    if (p.profile == name) return p;
  }
  profiles.push_back(MigProfileLabels{std::string(name), {}, {}, {}, {}});
  return profiles.back();
}

// "nvidia.com/mig-1g.10gb.me.count" -> profile "1g.10gb.me", attribute "count".
void ParseMigLabel(std::string_view key, std::string_view value,
                   std::vector<MigProfileLabels>& profiles) {
  std::string_view rest = key.substr(kMigLabelPrefix.size());
  static constexpr std::string_view kAttributes[] = {".count", ".memory", ".replicas", ".product"};
  for (std::string_view attr : kAttributes) {
    if (!rest.ends_with(attr) || rest.size() == attr.size()) continue;
    std::string_view profile = rest.substr(0, rest.size() - attr.size());
    // Profiles look like "<n>g.<m>gb[...]"; this skips nvidia.com/mig.* operator labels.
    if (profile.find('g') == std::string_view::npos) return;
    MigProfileLabels& p = ProfileEntry(profiles, profile);
    if (attr == ".count") p.count = ParseInt(value);
    if (attr == ".memory") p.memory_mib = MemoryLabelMib(value);
    if (attr == ".replicas") p.replicas = ParseInt(value);
    if (attr == ".product") p.product = std::string(value);
    return;
  }
}

// Fills in what GFD left unknown from a platform's labels. A platform that cuts every GPU into
// slices of one MIG profile advertises each slice as one nvidia.com/gpu: GFD's single strategy,
// whose product names the profile and whose memory is a slice's.
void FillFrom(const PlatformGpuFacts& f, GpuLabels& g) {
  bool slices = !f.mig_profile.empty() && MigComputeSlices(f.mig_profile) > 0;
  if (g.product.empty() && !f.product.empty()) {
    g.product = slices ? f.product + "-MIG-" + f.mig_profile : f.product;
    if (slices && g.mig_strategy == MigStrategy::kAbsent) g.mig_strategy = MigStrategy::kSingle;
  }
  if (!g.memory_mib) g.memory_mib = slices ? MigNominalMemoryMib(f.mig_profile) : f.memory_mib;
  if (!g.count) g.count = f.count;
  if (g.sharing == SharingStrategy::kUnknown && f.sharing) {
    g.sharing = *f.sharing;
    if (!g.replicas) g.replicas = f.replicas;
  }
}

}  // namespace

std::string_view GpuLabels::single_mig_profile() const {
  return mig_strategy == MigStrategy::kSingle ? MigProfileOfProduct(product) : std::string_view();
}

std::string_view MigProfileOfProduct(std::string_view product) {
  std::string_view p = product;
  size_t at = p.find("-MIG-");
  if (at == std::string_view::npos) return {};
  p = p.substr(at + 5);
  if (p.ends_with("-SHARED")) p.remove_suffix(7);
  if (p == "INVALID") return {};
  return p;
}

GpuLabels ParseGpuLabels(const std::vector<std::pair<std::string_view, std::string_view>>& labels) {
  GpuLabels g;
  std::string_view drv_major, drv_minor, drv_rev, old_drv_major, old_drv_minor, old_drv_rev;
  std::string_view rt_major, rt_minor, old_rt_major, old_rt_minor, cc_major, cc_minor;
  std::optional<Version> driver_full, runtime_full;
  for (const auto& [key, value] : labels) {
    if (!key.starts_with(kNvidia)) continue;
    std::string_view k = key.substr(kNvidia.size());
    if (k == "gpu.product")
      g.product = std::string(value);
    else if (k == "gpu.memory")
      g.memory_mib = MemoryLabelMib(value);
    else if (k == "gpu.count")
      g.count = ParseInt(value);
    else if (k == "gpu.family")
      g.family = std::string(value);
    else if (k == "gpu.compute.major")
      cc_major = value;
    else if (k == "gpu.compute.minor")
      cc_minor = value;
    else if (k == "cuda.driver-version.full")
      driver_full = Version::Parse(value);
    else if (k == "cuda.driver-version.major")
      drv_major = value;
    else if (k == "cuda.driver-version.minor")
      drv_minor = value;
    else if (k == "cuda.driver-version.revision")
      drv_rev = value;
    else if (k == "cuda.driver.major")
      old_drv_major = value;
    else if (k == "cuda.driver.minor")
      old_drv_minor = value;
    else if (k == "cuda.driver.rev")
      old_drv_rev = value;
    else if (k == "cuda.runtime-version.full")
      runtime_full = Version::Parse(value);
    else if (k == "cuda.runtime-version.major")
      rt_major = value;
    else if (k == "cuda.runtime-version.minor")
      rt_minor = value;
    else if (k == "cuda.runtime.major")
      old_rt_major = value;
    else if (k == "cuda.runtime.minor")
      old_rt_minor = value;
    else if (k == "gpu.sharing-strategy")
      g.sharing = ParseSharing(value);
    else if (k == "gpu.replicas")
      g.replicas = ParseInt(value);
    else if (k == "mig.strategy")
      g.mig_strategy = ParseMigStrategy(value);
    else if (k == "mig.capable") {
      if (value == "true") g.mig_capable = true;
      if (value == "false") g.mig_capable = false;
    } else if (k == "mig.config")
      g.mig_config = std::string(value);
    else if (k == "mig.config.state")
      g.mig_config_state = ParseMigConfigState(value);
    else if (k == "gpu-driver-upgrade-state")
      g.driver_upgrade_state = std::string(value);
    else if (k == "gpu.deploy.device-plugin")
      g.device_plugin_deploy = std::string(value);
    else if (k == "gpu.deploy.driver")
      g.driver_deploy = std::string(value);
    else if (key.starts_with(kMigLabelPrefix))
      ParseMigLabel(key, value, g.mig_profiles);
  }
  // The newer label names win; the deprecated duplicates fill in for old GFD releases.
  g.driver_version = driver_full         ? driver_full
                     : drv_major.empty() ? JoinVersion(old_drv_major, old_drv_minor, old_drv_rev)
                                         : JoinVersion(drv_major, drv_minor, drv_rev);
  g.cuda_runtime_version = runtime_full       ? runtime_full
                           : rt_major.empty() ? JoinVersion(old_rt_major, old_rt_minor, {})
                                              : JoinVersion(rt_major, rt_minor, {});
  g.compute_capability = JoinVersion(cc_major, cc_minor, {});
  std::sort(g.mig_profiles.begin(), g.mig_profiles.end(),
            [](const auto& a, const auto& b) { return a.profile < b.profile; });
  for (const PlatformGpuFacts& f : ReadPlatformGpuLabels(labels)) {
    if (g.platform.empty()) g.platform = f.platform;
    FillFrom(f, g);
  }
  return g;
}

std::string_view ToString(SharingStrategy s) {
  switch (s) {
    case SharingStrategy::kNone:
      return "none";
    case SharingStrategy::kTimeSlicing:
      return "time-slicing";
    case SharingStrategy::kMps:
      return "mps";
    case SharingStrategy::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view ToString(MigStrategy s) {
  switch (s) {
    case MigStrategy::kAbsent:
      return "absent";
    case MigStrategy::kNone:
      return "none";
    case MigStrategy::kSingle:
      return "single";
    case MigStrategy::kMixed:
      return "mixed";
    case MigStrategy::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view ToString(MigConfigState s) {
  switch (s) {
    case MigConfigState::kAbsent:
      return "absent";
    case MigConfigState::kPending:
      return "pending";
    case MigConfigState::kRebooting:
      return "rebooting";
    case MigConfigState::kSuccess:
      return "success";
    case MigConfigState::kFailed:
      return "failed";
    case MigConfigState::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace gpusched
