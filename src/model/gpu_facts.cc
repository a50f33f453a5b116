#include "gpusched/model/gpu_facts.h"

#include <algorithm>
#include <charconv>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

// Leading decimal number of `s`, or 0.
int LeadingNumber(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr != s.data() ? v : 0;
}

const MigProfileLabels* ProfileLabels(const GpuLabels& gpu, std::string_view profile) {
  for (const auto& p : gpu.mig_profiles) {
    if (p.profile == profile) return &p;
  }
  return nullptr;
}

// Whether no label names the sharing but `node` offers more units of `resource` than the GPUs a
// label counts (Karpenter's instance-gpu-count on a node whose device plugin time-slices without
// GFD): the device plugin advertises GPUs x replicas. Under MIG single the count is of slices.
bool MoreUnitsThanGpus(const NodeInfo& node, std::string_view resource) {
  return node.gpu.sharing == SharingStrategy::kUnknown && node.gpu.count.value_or(0) > 0 &&
         node.gpu.single_mig_profile().empty() &&
         node.allocatable.units(resource) > *node.gpu.count;
}

}  // namespace

int MigComputeSlices(std::string_view profile) {
  size_t g = profile.find("g.");
  if (g == std::string_view::npos || g == 0) return 0;
  return LeadingNumber(profile);
}

int64_t MigSliceMilli(int64_t count, int64_t compute_slices) {
  return std::clamp<int64_t>(count, 0, kMaxGpusPerNode) * compute_slices * 1000 /
         kMigComputeSlicesPerGpu;
}

bool IsMigSliceResource(std::string_view resource) {
  int slices = MigComputeSlices(MigProfileOf(resource));
  return !IsSharedResourceName(resource) && slices >= 1 && slices <= kMigComputeSlicesPerGpu;
}

int64_t GpuEquivalentMilli(std::string_view resource, int64_t units) {
  if (!IsMigSliceResource(resource)) return 0;
  return MigSliceMilli(units, MigComputeSlices(MigProfileOf(resource)));
}

std::optional<int64_t> MigNominalMemoryMib(std::string_view profile) {
  size_t dot = profile.find("g.");
  if (dot == std::string_view::npos) return std::nullopt;
  int gb = LeadingNumber(profile.substr(dot + 2));
  if (gb <= 0) return std::nullopt;
  return static_cast<int64_t>(gb) * 1024;
}

std::optional<int64_t> UnitMemoryMib(const NodeInfo& node, std::string_view resource) {
  std::string_view profile = MigProfileOf(resource);
  if (!profile.empty()) {
    const MigProfileLabels* labels = ProfileLabels(node.gpu, profile);
    if (labels && labels->memory_mib) return labels->memory_mib;
    return MigNominalMemoryMib(profile);
  }
  if (!node.gpu.memory_mib) return std::nullopt;
  if (SharingOf(node, resource) == SharingStrategy::kMps && node.gpu.replicas &&
      *node.gpu.replicas > 1) {
    return *node.gpu.memory_mib / *node.gpu.replicas;
  }
  return node.gpu.memory_mib;
}

SharingStrategy SharingOf(const NodeInfo& node, std::string_view resource) {
  std::string_view profile = MigProfileOf(resource);
  if (!profile.empty()) {
    const MigProfileLabels* labels = ProfileLabels(node.gpu, profile);
    // MPS is not supported on MIG; shared MIG slices are time-sliced.
    bool shared = IsSharedResourceName(resource) || (labels && labels->replicas.value_or(1) > 1);
    return shared ? SharingStrategy::kTimeSlicing : SharingStrategy::kNone;
  }
  bool shared = IsSharedResourceName(resource) || node.gpu.replicas.value_or(1) > 1 ||
                node.gpu.sharing == SharingStrategy::kTimeSlicing ||
                node.gpu.sharing == SharingStrategy::kMps || MoreUnitsThanGpus(node, resource);
  if (!shared) return SharingStrategy::kNone;
  return node.gpu.sharing == SharingStrategy::kMps ? SharingStrategy::kMps
                                                   : SharingStrategy::kTimeSlicing;
}

int64_t MigSlicesPerGpu(std::string_view profile) {
  switch (MigComputeSlices(profile)) {
    case 1:
      return 7;
    case 2:
      return 3;
    case 3:
      return 2;
    case 4:
    case 7:
      return 1;
    default:
      return 0;
  }
}

GpuUnit GpuUnitOf(const NodeInfo& node, std::string_view resource) {
  GpuUnit unit;
  int64_t slices = MigSlicesPerGpu(node.gpu.single_mig_profile());
  if (slices > 0) unit = {GpuUnitKind::kMigSlice, slices};
  if (SharingOf(node, resource) == SharingStrategy::kNone) return unit;
  int64_t replicas = node.gpu.replicas.value_or(0);
  // Under MIG single gpu.count counts slices; else it counts the GPUs the units replicate.
  int64_t count = node.gpu.count.value_or(0);
  int64_t units = node.allocatable.units(resource);
  if (replicas < 2 && count > 0 && units > count && units % count == 0) replicas = units / count;
  if (replicas < 2) return unit;
  // Clamped first, so that a hostile label cannot overflow the product.
  replicas = std::min(replicas, kMaxGpusPerNode);
  return {GpuUnitKind::kReplica, std::min(unit.per_gpu * replicas, kMaxGpusPerNode)};
}

int64_t PhysicalMilli(GpuUnit unit, int64_t units) {
  return std::clamp<int64_t>(units, 0, kMaxGpusPerNode) * 1000 / unit.per_gpu;
}

}  // namespace gpusched
