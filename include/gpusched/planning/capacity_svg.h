// capacity_svg: `gpusched capacity --svg FILE`, a picture of every GPU node as a row of cells.
//
// Nodes are grouped by GPU product (nvidia.com/gpu.product; kNoGroup without one), a heading per
// product with its figures from the CapacityReport (nodes, GPUs total, allocated, idle,
// fragmented). Each node is one row: its name (truncated to kSvgNameChars, XML-escaped, as every
// text the picture shows: names and labels are input nobody vetted) then one cell per unit:
//   whole GPUs (nvidia.com/gpu where a unit is a GPU): allocated, idle, or fragmented; the
//     fragmented cells are the node's device fragment under FGD's measure against the default
//     policy's target workload (NodeFragmentMilli over IdleOf, as FragmentationOf sums it),
//     rounded to whole GPUs, out of its idle ones;
//   MIG slices (nvidia.com/mig-<profile>, and nvidia.com/gpu under MIG single): allocated or
//     free, a cell per slice;
//   time-sliced or MPS replicas (nvidia.com/gpu.shared, and nvidia.com/gpu where not renamed):
//     allocated or free, a cell per replica.
// A row draws at most kSvgMaxCellsPerNode cells, then "+N more"; the output therefore grows
// linearly with the node count (a fixed cell size; the picture grows in height), about 1.5 KB per
// node at most. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/util/enum_count.h"

namespace gpusched {

inline constexpr size_t kSvgMaxCellsPerNode = 64;
inline constexpr size_t kSvgNameChars = 28;

enum class SvgCell : uint8_t {
  kAllocated,        // a whole GPU a pod holds
  kIdle,             // a whole GPU free, of use to the target workload
  kFragmented,       // a whole GPU free that FGD counts as fragmented
  kMigAllocated,     // a MIG slice a pod holds
  kMigFree,          // a MIG slice free
  kSharedAllocated,  // a time-slicing or MPS replica a pod holds
  kSharedFree,       // a replica free
};
inline constexpr size_t kSvgCellKinds = EnumCount(SvgCell::kSharedFree);
// The CSS class of a cell kind in the SVG ("a", "i", "f", "ma", "mf", "sa", "sf").
std::string_view SvgCellClass(SvgCell kind);

// One node's row: every cell, in the order drawn (whole GPUs, then MIG slices by profile, then
// replicas), before the cap.
struct SvgNodeRow {
  std::string name;
  std::string product;
  std::vector<SvgCell> cells;
  std::array<int64_t, kSvgCellKinds> counts{};  // per SvgCell
};

// The rows of every node of `snapshot` that offers a GPU resource, in snapshot order.
std::vector<SvgNodeRow> CapacitySvgRows(const ClusterSnapshot& snapshot);

// `text` with &, <, >, " and ' escaped, and characters XML 1.0 forbids (control characters but
// tab, LF, CR; invalid UTF-8) replaced by '?'.
std::string XmlEscape(std::string_view text);

// The whole SVG document.
std::string FormatCapacitySvg(const CapacityReport& report, const ClusterSnapshot& snapshot);

}  // namespace gpusched
