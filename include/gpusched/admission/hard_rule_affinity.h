// HardRuleAffinity: gpusched's hard GPU rules for one pod written as required node affinity, so
// that kube-scheduler's own filters, cluster-autoscaler's simulation and Karpenter's NodePool
// requirements refuse the nodes gpusched refuses (docs/operations.md, "Autoscaled clusters").
//
// The rules carried: the maintenance plugin's (GPU Operator state labels: a MIG reconfiguration
// or driver upgrade in progress or failed, the device plugin or driver paused), product pins
// (gpusched.io/gpu-product or a profile's `require.products`), memory floors
// (gpusched.io/min-gpu-memory, `require.minMemory`) on nvidia.com/gpu and nvidia.com/gpu.shared,
// and `sharing: exclusive` on nvidia.com/gpu. They are written on the labels that exist when a node
// is *planned*, not only once GPU Feature Discovery ran: GFD's (nvidia.com/gpu.product, .memory,
// .sharing-strategy, .replicas) and, for each platform enabled, GKE's
// (cloud.google.com/gke-accelerator, gke-gpu-partition-size, gke-gpu-sharing-strategy), Karpenter's
// and EKS Auto Mode's (instance-gpu-name, -memory, -manufacturer) and AKS's
// (kubernetes.azure.com/accelerator with the VM size in node.kubernetes.io/instance-type). The
// result is an OR of alternatives, each an AND of requirements, mirroring how gpusched reads a node
// (model/gpu_labels.h): GFD's labels first, then GKE, then Karpenter/EKS Auto, then AKS, each
// platform's alternative guarded by DoesNotExist on the labels that take precedence. Platform
// label values are classified by gpusched's own reader (ParseGpuLabels), so the affinity and the
// filter cannot disagree on what a value means.
//
// Product globs become In lists over a vocabulary: the products gpusched's platform tables name
// and those on the cluster's nodes (with their -SHARED variants), plus the exact text of a pin
// without wildcards. A node whose product is in neither is refused by a wildcard pin it would pass
// in gpusched. The other rules (family, compute capability, driver and CUDA floors, a memory floor
// on a MIG resource, MIG layout, maintenance) are listed in `left_out`: no label of a planned node
// carries them. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/admission/platform_terms.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/model/platform_gpu_labels.h"

namespace gpusched {

// What the cluster's nodes add to gpusched's tables.
struct LabelVocabulary {
  std::vector<std::string> products;        // nvidia.com/gpu.product values on the nodes
  std::vector<int64_t> mps_replicas;        // nvidia.com/gpu.replicas of MPS nodes, above 1
  std::vector<std::string> upgrade_states;  // nvidia.com/gpu-driver-upgrade-state values
  std::vector<std::string> plugin_deploys;  // nvidia.com/gpu.deploy.device-plugin values
  std::vector<std::string> driver_deploys;  // nvidia.com/gpu.deploy.driver values
};

// Which of the maintenance plugin's refusals the pod's profile applies (plugins/maintenance.h).
enum class MaintenanceRule { kNone, kBrokenOnly, kBrokenAndInProgress };

struct HardRuleOptions {
  AffinityPlatforms platforms;
  MaintenanceRule maintenance = MaintenanceRule::kBrokenAndInProgress;
};

struct RuleAffinity {
  std::vector<AffinityAlternative> alternatives;  // OR-ed; empty when nothing is carried
  std::vector<std::string> carried;               // the rules written, e.g. "gpu-product NVIDIA-L4"
  std::vector<std::string> left_out;              // hard rules no planned node's label carries
  // The carried rules admit no node at all (an exclusive pod asking for a shared resource, a
  // product pin no known product matches): no affinity is written, gpusched's filter says why.
  bool unsatisfiable = false;
};

// At most this many alternatives are written for one pod's rules; past it the pod is left alone.
inline constexpr size_t kMaxRuleAlternatives = 48;

// The affinity for the hard rules of `intent` on a pod whose first GPU resource is `resource`.
RuleAffinity AffinityForHardRules(const PodIntent& intent, std::string_view resource,
                                  const LabelVocabulary& vocabulary,
                                  const HardRuleOptions& options);

// Whether a node with these labels meets some alternative (for explain, why-pending and tests).
bool AdmitsNode(const std::vector<AffinityAlternative>& alternatives,
                const std::vector<std::pair<std::string_view, std::string_view>>& labels);

}  // namespace gpusched
