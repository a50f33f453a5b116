// Facts derived from a node's labels and resources that several plugins need: MIG profile sizes,
// the memory one unit of a resource gives, whether a resource is a shared replica, and what one
// unit of a GPU resource is of the node's physical GPUs.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/node.h"

namespace gpusched {

// Compute slices in one GPU that MIG divides (A100, H100: 7).
inline constexpr int64_t kMigComputeSlicesPerGpu = 7;

// Compute slices of a MIG profile: "3g.20gb" -> 3; 0 when the name is not a profile.
int MigComputeSlices(std::string_view profile);
// Milli-GPU that `count` MIG slices of `compute_slices` each stand for (count clamped to
// 0..kMaxGpusPerNode, so no input overflows it).
int64_t MigSliceMilli(int64_t count, int64_t compute_slices);
// Milli-GPU that `units` of `resource` stand for: a MIG slice by its compute slices out of 7;
// 0 for resources that are not MIG slices (IsMigSliceResource).
int64_t GpuEquivalentMilli(std::string_view resource, int64_t units);
// Whether `resource` is a MIG slice, nvidia.com/mig-<profile>, of a profile of 1 to 7 compute
// slices; time-sliced replicas (.shared) are not slices.
bool IsMigSliceResource(std::string_view resource);
// The nominal memory in a profile's name: "3g.20gb" -> 20480 MiB.
std::optional<int64_t> MigNominalMemoryMib(std::string_view profile);

// Memory one unit of `resource` gives a container on `node`, in MiB, if known: a MIG slice's
// memory, a full GPU's, or an MPS replica's share.
std::optional<int64_t> UnitMemoryMib(const NodeInfo& node, std::string_view resource);

// How `resource` is shared on `node`: kNone when each unit is a whole device or MIG slice. Shared
// when a label says so, or, where none names the sharing, when the node offers more units than
// the GPUs a label counts (then time-slicing, the device plugin's only strategy without MPS
// labels).
SharingStrategy SharingOf(const NodeInfo& node, std::string_view resource);

// What one unit of nvidia.com/gpu or nvidia.com/gpu.shared is on a node: a whole GPU, a replica of
// a GPU shared by time-slicing or MPS (per_gpu replicas to a GPU), or a slice of a GPU cut under
// the MIG single strategy (per_gpu slices of the profile to a GPU, MigSlicesPerGpu), or a replica
// of such a slice. The device plugin advertises count x replicas (or slices) units, so
// units / per_gpu are the physical GPUs behind them.
enum class GpuUnitKind { kWholeGpu, kReplica, kMigSlice };
struct GpuUnit {
  GpuUnitKind kind = GpuUnitKind::kWholeGpu;
  int64_t per_gpu = 1;  // units one physical GPU gives, 1..kMaxGpusPerNode
};
// The unit of `resource` (nvidia.com/gpu or nvidia.com/gpu.shared) on `node`. Replicas per GPU
// come from nvidia.com/gpu.replicas (or GKE's clients per GPU); without it, from
// nvidia.com/gpu.count where the units are a multiple of it; else 1, as if each unit were a GPU.
GpuUnit GpuUnitOf(const NodeInfo& node, std::string_view resource);
// How many slices of `profile` one GPU holds at most: 7 of a 1g, 3 of a 2g, 2 of a 3g, 1 of a 4g
// or 7g (the MIG geometry of A100/H100-class GPUs); 0 when the name is not a profile.
int64_t MigSlicesPerGpu(std::string_view profile);
// Milli-GPU that `units` of a GPU resource of unit `unit` stand for (units clamped to
// 0..kMaxGpusPerNode): a whole GPU is 1000, a replica or slice 1000 / per_gpu.
int64_t PhysicalMilli(GpuUnit unit, int64_t units);

}  // namespace gpusched
