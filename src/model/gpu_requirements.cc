#include "gpusched/model/gpu_requirements.h"

#include <algorithm>

#include "gpusched/util/quantity.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

std::string Invalid(std::string_view annotation, std::string_view expected) {
  return "invalid annotation " + std::string(annotation) + ": expected " + std::string(expected);
}

}  // namespace

bool GpuRequirements::empty() const { return criteria() == 0; }

int GpuRequirements::criteria() const {
  return !products.empty() + !families.empty() + min_memory_mib.has_value() +
         min_compute_capability.has_value() + min_cuda_driver.has_value() +
         min_cuda_runtime.has_value();
}

std::optional<int64_t> ParseMemoryMib(std::string_view quantity) {
  auto milli = ParseQuantityMilli(Trimmed(quantity));
  if (!milli || *milli <= 0) return std::nullopt;
  // bytes -> MiB, rounded up so "40G" asks for at least 40e9 bytes.
  int64_t bytes = MilliToUnitsCeil(*milli);
  constexpr int64_t kMib = 1024 * 1024;
  return bytes / kMib + (bytes % kMib != 0);
}

PodIntent ParsePodIntent(const PodInfo& pod, const PodIntent& defaults) {
  PodIntent intent = defaults;
  auto version = [&](std::string_view key, std::optional<Version>& slot, const char* example) {
    const std::string* v = pod.annotation(key);
    if (!v || !intent.error.empty()) return;
    slot = Version::Parse(Trimmed(*v));
    if (!slot) intent.error = Invalid(key, std::string("a version such as ") + example);
  };
  auto list = [&](std::string_view key, std::vector<std::string>& slot, const char* example) {
    const std::string* v = pod.annotation(key);
    if (!v || !intent.error.empty()) return;
    slot = SplitList(*v);
    bool too_long = std::any_of(slot.begin(), slot.end(),
                                [](const std::string& s) { return s.size() > kMaxListItemBytes; });
    if (slot.empty() || slot.size() > kMaxListItems || too_long) {
      intent.error =
          Invalid(key, "a comma-separated list (at most " + std::to_string(kMaxListItems) +
                           " items of at most " + std::to_string(kMaxListItemBytes) +
                           " bytes) such as " + example);
      slot.clear();
    }
  };
  list(kGpuProductAnnotation, intent.require.products, "NVIDIA-A100-*,NVIDIA-H100-*");
  list(kGpuFamilyAnnotation, intent.require.families, "ampere,hopper");
  if (const std::string* v = pod.annotation(kMinGpuMemoryAnnotation); v && intent.error.empty()) {
    intent.require.min_memory_mib = ParseMemoryMib(*v);
    if (!intent.require.min_memory_mib) {
      intent.error = Invalid(kMinGpuMemoryAnnotation, "a quantity per GPU such as 40Gi");
    }
  }
  version(kMinComputeCapabilityAnnotation, intent.require.min_compute_capability, "8.0");
  version(kMinCudaDriverAnnotation, intent.require.min_cuda_driver, "535.104");
  version(kMinCudaRuntimeAnnotation, intent.require.min_cuda_runtime, "12.2");
  if (const std::string* v = pod.annotation(kSharingAnnotation); v && intent.error.empty()) {
    std::string mode = Trimmed(*v);
    if (mode == "exclusive") {
      intent.tenancy = GpuTenancy::kExclusive;
    } else if (mode == "any" || mode == "shared") {
      intent.tenancy = GpuTenancy::kAny;
    } else {
      intent.error = Invalid(kSharingAnnotation, "exclusive or any");
    }
  }
  return intent;
}

}  // namespace gpusched
