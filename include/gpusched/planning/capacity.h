// capacity: what fits in a cluster right now, per GPU product and per node pool.
//
// GPU figures count physical GPUs: a unit of nvidia.com/gpu or nvidia.com/gpu.shared is the share
// of a GPU that GpuUnitOf (gpusched/model/gpu_facts.h) says it is (a whole GPU, one of R
// time-sliced or MPS replicas, one of the slices a MIG-single GPU is cut into), and MIG-mixed
// slices count by their compute slices (a 1g slice is 1/7 GPU), so a report never shows more GPUs
// than the node has. `allocated` is what bound pods hold, each resource counted up to its
// allocatable, and idle = total - allocated; `fragmented` is FGD's measure against the default
// policy's target workload (FragmentationOf, gpusched/cluster/cluster_fragmentation.h), at most
// the idle GPUs. Replicas (renamed or not) and MIG slices are also counted in units of their own.
// As everywhere gpusched judges devices, a node counts at most kMaxGpusPerNode of a resource, and
// sums saturate, so no input overflows a figure.
//
// Fits: how many more pods of each standard shape (CapacityShapes) fit, each shape counted alone
// from the current state, as if placed one synthetic pod at a time through the engine of the
// profile the policy selects for it until no node passes (Engine::Filter). A node's verdict
// depends on the pod, the cycle (prepared from the snapshot, unchanged by the placements) and
// that node alone, so where the pods go first does not change how many each node ends up taking:
// each node is charged pod after pod until its filter refuses, a content class of equal nodes is
// judged once, and the count is that of the one-by-one greedy fill whatever its order. The work is
// bounded by the input: a node is tried at most as often as its free units allow (floor(free /
// units per pod)) plus once, and a shape stops at `max_placements_per_shape`
// (kMaxPlacementsPerShape), past which its count is a lower bound (CapacityReport::capped), the
// nodes counted in snapshot order. So a shape costs at most placements + nodes filter calls.
//
// Multi-node jobs: groups of N pods of G whole GPUs, counted per domain of each topology level
// from the same per-node counts (capacity_topology.h).
//
// Output is bounded too: at most kMaxMigShapes MIG shapes; group names (products, pool values)
// quoted (printable ASCII, QuoteForMessage) and cut at kMaxGroupNameBytes; at most
// kMaxReportGroups groups per grouping (TopOrOther, report_rows.h), the nodes of the rest summed
// under kOtherGroup. Unlike the other reports' texts, group names are quoted here, not where the
// report is written: a group is its name as printed, so labels that print alike are one group, one
// row and one JSON key.
//
// Pure functions over an immutable snapshot and policy; thread-safe. A Cancellation (options)
// stops the work between nodes; the report then says so (CapacityReport::cancelled) and holds
// nothing else worth printing. Never run on a verb's thread: a large cluster takes a second.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/pod.h"
#include "gpusched/planning/capacity_topology.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/cancellation.h"

namespace gpusched {

// Placements per shape at most: 10,000 pods is more than 1,000 nodes of 8 GPUs hold.
inline constexpr size_t kMaxPlacementsPerShape = 10000;
// The group of nodes without the pool label, and of GPU nodes without a product label.
inline constexpr std::string_view kNoGroup = "(none)";
// MIG profiles counted as shapes at most (the known GPUs have 6 to 8 each).
inline constexpr size_t kMaxMigShapes = 16;
// Groups per grouping at most, by most nodes (ties by name); the rest are summed as kOtherGroup.
inline constexpr size_t kMaxReportGroups = 256;
inline constexpr std::string_view kOtherGroup = "(other)";
// A group's name (a label value) is cut past this many bytes.
inline constexpr size_t kMaxGroupNameBytes = 96;

// One standard pod shape: `count` units of `resource`; for nvidia.com/gpu, counted only on the
// nodes where its unit is of kind `unit` (GpuUnitOf).
struct CapacityShape {
  std::string
      name;  // gpu-1, gpu-2, gpu-4, gpu-8, mig-<profile>, gpu.shared, gpu-replica, gpu-slice
  std::string resource;
  int64_t count = 1;
  GpuUnitKind unit = GpuUnitKind::kWholeGpu;
};

// The shapes counted for `snapshot`: 1, 2, 4 and 8 whole GPUs; one slice of every MIG profile
// some node offers (nvidia.com/mig-<profile>, sorted, the first kMaxMigShapes, named with the
// profile quoted); one replica of nvidia.com/gpu.shared where some node offers it; one
// nvidia.com/gpu where some node offers it as time-sliced or MPS replicas (gpu-replica), and
// where some node offers it as MIG-single slices (gpu-slice).
std::vector<CapacityShape> CapacityShapes(const ClusterSnapshot& snapshot);

// The synthetic pod of `shape`: pending, no annotations, requesting only the shape.
PodInfo ShapePod(const CapacityShape& shape);

// How many more pods of one shape fit (see the top of this file), node by node.
struct FitCount {
  std::vector<int64_t> per_node;  // per snapshot.nodes() index
  int64_t total = 0;
  bool capped = false;     // stopped at max_placements while the free units allowed more
  bool cancelled = false;  // stopped by the Cancellation: the counts are partial
  size_t judgements = 0;   // filter calls made (one node each): the work, for tests
};
FitCount CountFits(const Policy& policy, const ClusterSnapshot& snapshot,
                   const CapacityShape& shape, size_t max_placements = kMaxPlacementsPerShape,
                   const Cancellation* cancellation = nullptr);

// GPU equivalents (see the top of this file); replicas in units.
struct GpuFigures {
  double total = 0;
  double allocated = 0;
  double idle = 0;
  double fragmented = 0;
  int64_t shared_replicas = 0;  // replicas, nvidia.com/gpu.shared or not renamed, allocatable
  int64_t shared_allocated = 0;
  int64_t mig_slices = 0;  // MIG slices (mixed or single) allocatable
  int64_t mig_slices_allocated = 0;
};

struct CapacityGroup {
  size_t nodes = 0;
  GpuFigures gpus;
  std::vector<int64_t> fits;  // per CapacityReport::shapes
};

struct CapacityOptions {
  std::string pool_label;  // empty: no pools
  size_t max_placements_per_shape = kMaxPlacementsPerShape;
  const Cancellation* cancellation = nullptr;  // checked between nodes; null: never cancelled
  // Multi-node jobs counted per topology domain (capacity_topology.h); empty: none.
  std::vector<GroupShape> group_shapes = DefaultGroupShapes();
};

struct CapacityReport {
  std::string inventory;  // where the snapshot came from, for the heading; set by the caller
  std::string policy_source;
  std::string profile;  // of the first shape's pod (every shape's pod has no annotation)
  std::vector<CapacityShape> shapes;
  std::vector<bool> capped;                       // per shape: its fits are lower bounds
  CapacityGroup cluster;                          // every node offering a GPU resource
  std::map<std::string, CapacityGroup> products;  // by nvidia.com/gpu.product
  std::string pool_label;
  std::map<std::string, CapacityGroup> pools;  // by the pool label's value; empty without one
  std::vector<LevelCapacity> topology;         // per topology level, for the group shapes
  bool cancelled = false;  // the Cancellation stopped it: incomplete, not to be shown
};

// The report for `snapshot` under `policy`. Nodes that offer no GPU resource (nvidia.com/gpu,
// MIG slices, nvidia.com/gpu.shared) are left out of every group. The pool label is read from the
// labels gpusched keeps of a node (IsPinLabel: nvidia.com/ labels); nodes without it go to
// kNoGroup. The group shapes are counted per domain of each level TopologyLevelsOf names, from
// the report's own whole-GPU fits where a shape's pod is one of them.
CapacityReport ComputeCapacity(const Policy& policy, const ClusterSnapshot& snapshot,
                               const CapacityOptions& options = {});

}  // namespace gpusched
