// The GPU facts a node's labels carry: GPU Feature Discovery (product, memory, count, family,
// compute capability, driver and CUDA versions, sharing, MIG) and the GPU Operator's state labels
// (MIG config and its state, driver upgrade state, operand deploy switches).
//
// Where GFD wrote no product, memory, count or sharing, the managed platforms' labels fill them in
// (gpusched/model/platform_gpu_labels.h), first that of GKE, then Karpenter/EKS, then AKS: GFD's
// labels describe the GPUs it saw, the platforms' the machine type they ordered. A GPU memory
// label above kMaxGpuMemoryMib was written in bytes by an old GFD and is read as such.
//
// See shared/reference/nvidia-gpu-conventions.md. A missing or malformed label leaves its field
// unknown (empty string or nullopt); parsing never fails. Value type; not synchronized.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/util/version.h"

namespace gpusched {

// GFD's keys that other parts name in full (node pins, the webhook's node affinity), with what
// each holds; the reader here matches them by what follows nvidia.com/.
inline constexpr std::string_view kGfdProduct = "nvidia.com/gpu.product";  // NVIDIA-A100-SXM4-40GB
inline constexpr std::string_view kGfdMemory = "nvidia.com/gpu.memory";    // MiB per GPU
inline constexpr std::string_view kGfdSharing =
    "nvidia.com/gpu.sharing-strategy";                                       // none, mps, ...
inline constexpr std::string_view kGfdReplicas = "nvidia.com/gpu.replicas";  // per GPU, shared

// No GPU has this much memory in MiB (10^7 MiB is about 9.5 TiB); a larger value is in bytes.
inline constexpr int64_t kMaxGpuMemoryMib = 10'000'000;

enum class SharingStrategy { kUnknown, kNone, kTimeSlicing, kMps };
enum class MigStrategy { kAbsent, kNone, kSingle, kMixed, kUnknown };
enum class MigConfigState { kAbsent, kPending, kRebooting, kSuccess, kFailed, kUnknown };

// Labels of one MIG profile under the mixed strategy (nvidia.com/mig-<profile>.*).
struct MigProfileLabels {
  std::string profile;  // as in the resource name: "1g.5gb", "1g.10gb.me"
  std::optional<int64_t> count;
  std::optional<int64_t> memory_mib;
  std::optional<int64_t> replicas;
  std::string product;
  bool operator==(const MigProfileLabels&) const = default;
};

struct GpuLabels {
  std::string product;  // nvidia.com/gpu.product, e.g. NVIDIA-A100-SXM4-40GB or ...-MIG-1g.10gb
  std::optional<int64_t> memory_mib;
  std::optional<int64_t> count;
  std::string family;  // ampere, hopper, ...
  std::optional<Version> compute_capability;
  std::optional<Version> driver_version;
  std::optional<Version> cuda_runtime_version;
  SharingStrategy sharing = SharingStrategy::kUnknown;
  std::optional<int64_t> replicas;
  MigStrategy mig_strategy = MigStrategy::kAbsent;
  std::optional<bool> mig_capable;
  std::string mig_config;
  MigConfigState mig_config_state = MigConfigState::kAbsent;
  std::string driver_upgrade_state;  // nvidia.com/gpu-driver-upgrade-state, "" when absent
  std::string device_plugin_deploy;  // nvidia.com/gpu.deploy.device-plugin, "" when absent
  std::string driver_deploy;         // nvidia.com/gpu.deploy.driver, "" when absent
  std::vector<MigProfileLabels> mig_profiles;  // sorted by profile
  // The first managed platform whose GPU labels the node carries ("gke", "karpenter", "aks"), or
  // empty: where what GFD did not write came from.
  std::string platform;

  // Under MIG single the product reads "<model>-MIG-<profile>[-SHARED]"; returns the profile.
  std::string_view single_mig_profile() const;
  bool operator==(const GpuLabels&) const = default;
};

// The MIG profile in a product name as GFD writes it under the single strategy
// ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb" -> "1g.5gb", a "-SHARED" suffix dropped); empty for a
// product that names none.
std::string_view MigProfileOfProduct(std::string_view product);

GpuLabels ParseGpuLabels(const std::vector<std::pair<std::string_view, std::string_view>>& labels);

std::string_view ToString(SharingStrategy s);
std::string_view ToString(MigStrategy s);
std::string_view ToString(MigConfigState s);

}  // namespace gpusched
