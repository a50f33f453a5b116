// Which extended resources gpusched treats as GPU resources, and what their names mean.
//
// Always: nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-<profile>[.shared]; plus any
// extra names a configuration lists. Immutable after construction; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kSharedGpuResource = "nvidia.com/gpu.shared";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";
// One GPU (or one device of a GPU resource) in the milli-units resource amounts are kept in.
inline constexpr int64_t kMilliPerGpu = 1000;
// The most units of one GPU resource a node may offer and still be judged. Packing looks at a node
// device by device, so this bounds the work a node costs, whatever number it advertises; it is far
// above real nodes (8 GPUs, or 8 x the time-slicing replicas).
inline constexpr int64_t kMaxGpusPerNode = 1024;

class GpuResourceNames {
 public:
  explicit GpuResourceNames(std::vector<std::string> extra = {});

  bool IsGpuResource(std::string_view name) const;
  const std::vector<std::string>& extra() const { return extra_; }

 private:
  std::vector<std::string> extra_;
};

// "nvidia.com/mig-1g.5gb" -> "1g.5gb"; "nvidia.com/mig-1g.5gb.shared" -> "1g.5gb"; else "".
std::string_view MigProfileOf(std::string_view resource);
// True for the time-sliced/MPS renamed resources (name ends in ".shared").
bool IsSharedResourceName(std::string_view resource);

}  // namespace gpusched
