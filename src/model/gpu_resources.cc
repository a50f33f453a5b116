#include "gpusched/model/gpu_resources.h"

#include <algorithm>

namespace gpusched {
namespace {
constexpr std::string_view kSharedSuffix = ".shared";
}

GpuResourceNames::GpuResourceNames(std::vector<std::string> extra) : extra_(std::move(extra)) {}

bool GpuResourceNames::IsGpuResource(std::string_view name) const {
  if (name == kGpuResource || name == kSharedGpuResource) return true;
  if (name.starts_with(kMigResourcePrefix) && name.size() > kMigResourcePrefix.size()) return true;
  return std::find(extra_.begin(), extra_.end(), name) != extra_.end();
}

std::string_view MigProfileOf(std::string_view resource) {
  if (!resource.starts_with(kMigResourcePrefix)) return {};
  std::string_view profile = resource.substr(kMigResourcePrefix.size());
  if (profile.ends_with(kSharedSuffix)) profile.remove_suffix(kSharedSuffix.size());
  return profile;
}

bool IsSharedResourceName(std::string_view resource) { return resource.ends_with(kSharedSuffix); }

}  // namespace gpusched
