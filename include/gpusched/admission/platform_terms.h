// PlatformTerms: the node selector alternatives under which a node planned by a managed platform
// (GKE's cloud.google.com/ labels, Karpenter's and EKS Auto Mode's instance-gpu-* labels, AKS's
// and EC2's instance types) carries a GPU that passes given criteria, with the building blocks
// every part of the webhook's affinity is made of. Each platform's alternatives are guarded by
// DoesNotExist on the labels that take precedence in gpusched's reading of a node (GFD's, then
// GKE's, Karpenter's, AKS's: model/gpu_labels.h), and its label values are classified by that very
// reader, once per process. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/model/platform_gpu_labels.h"

namespace gpusched {

// One alternative: requirements AND-ed.
using AffinityAlternative = std::vector<PinRequirement>;

// What a pod's rules ask of the GPU a node's labels describe.
struct GpuCriteria {
  const std::vector<std::string>* products = nullptr;  // globs, any may match; null: no pin
  std::optional<int64_t> min_memory_mib;

  bool any() const { return products || min_memory_mib; }
  bool ProductOk(std::string_view product) const;  // gpu-match's ProductMatches
  bool Ok(const GpuLabels& g) const;
};

// Requirements as Kubernetes spells them (In values sorted, duplicates dropped).
PinRequirement In(std::string_view key, std::vector<std::string> values);
PinRequirement NotIn(std::string_view key, std::vector<std::string> values);
PinRequirement Absent(std::string_view key);
PinRequirement Gt(std::string_view key, int64_t bound);
PinRequirement Lt(std::string_view key, int64_t bound);
// `a` with `more` appended.
AffinityAlternative Plus(AffinityAlternative a, const AffinityAlternative& more);

// The guards that leave a platform's alternative to nodes where GFD's labels do not decide.
AffinityAlternative GfdAbsent(const GpuCriteria& c);

// The alternatives of every platform `platforms` names, for the criteria `c` (any() true).
std::vector<AffinityAlternative> PlatformAlternatives(const GpuCriteria& c,
                                                      const AffinityPlatforms& platforms);

}  // namespace gpusched
