// What a pod wants of a GPU beyond the count: product, family, memory per GPU, compute capability,
// driver and CUDA runtime versions (hard requirements or soft preferences), exclusivity, and the
// pod annotations that express them.
//
// ParsePodIntent merges a profile's defaults with the pod's gpusched.io/ annotations; an annotation
// it cannot parse yields an error naming the annotation and the form it expects. Value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/pod.h"
#include "gpusched/util/version.h"

namespace gpusched {

inline constexpr std::string_view kProfileAnnotation = "gpusched.io/profile";
// A list annotation (products, families) holds at most this many items of at most
// kMaxListItemBytes each: every candidate node is matched against all of them, so the work of a
// request must not grow with the size of what a pod carries.
inline constexpr size_t kMaxListItems = 64;
inline constexpr size_t kMaxListItemBytes = 128;
inline constexpr std::string_view kGpuProductAnnotation = "gpusched.io/gpu-product";
inline constexpr std::string_view kGpuFamilyAnnotation = "gpusched.io/gpu-family";
inline constexpr std::string_view kMinGpuMemoryAnnotation = "gpusched.io/min-gpu-memory";
inline constexpr std::string_view kMinComputeCapabilityAnnotation =
    "gpusched.io/min-compute-capability";
inline constexpr std::string_view kMinCudaDriverAnnotation = "gpusched.io/min-cuda-driver";
inline constexpr std::string_view kMinCudaRuntimeAnnotation = "gpusched.io/min-cuda-runtime";
inline constexpr std::string_view kSharingAnnotation = "gpusched.io/sharing";

struct GpuRequirements {
  std::vector<std::string> products;  // globs over nvidia.com/gpu.product; any may match
  std::vector<std::string> families;  // any may match, case-insensitive
  std::optional<int64_t> min_memory_mib;
  std::optional<Version> min_compute_capability;
  std::optional<Version> min_cuda_driver;
  std::optional<Version> min_cuda_runtime;

  bool empty() const;
  // Number of criteria set (each list or minimum counts once).
  int criteria() const;
};

// Whether a pod may use a GPU other pods use at the same time: any (a time-slicing or MPS replica
// will do) or exclusive (whole GPUs or MIG slices only). Policy files and the annotation spell it
// `sharing: exclusive | any`; "sharing" alone is also the name of the plugin that enforces it and
// the key of that plugin's replica-request rules, so the code calls this idea tenancy.
enum class GpuTenancy { kAny, kExclusive };

struct PodIntent {
  GpuRequirements require;
  GpuRequirements prefer;
  bool prefer_cheapest = false;
  GpuTenancy tenancy = GpuTenancy::kAny;  // profile `sharing:`, annotation gpusched.io/sharing
  std::string error;  // non-empty: the pod is rejected everywhere with this reason
};

// `defaults` with the pod's annotations applied on top (an annotation replaces the same criterion).
PodIntent ParsePodIntent(const PodInfo& pod, const PodIntent& defaults);

// A memory amount per GPU as annotations and policy files write it; nullopt on malformed text.
std::optional<int64_t> ParseMemoryMib(std::string_view quantity);  // "40Gi" -> 40960

}  // namespace gpusched
