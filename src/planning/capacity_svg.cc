#include "gpusched/planning/capacity_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/fragmentation.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/packing/target_workload.h"
#include "gpusched/planning/capacity_format.h"

namespace gpusched {
namespace {

// Geometry, in px: a fixed cell, so 1,000 nodes make a tall picture of legible rows.
constexpr int kCell = 10;
constexpr int kPitch = 12;    // cell plus gap
constexpr int kRow = 14;      // a node's row
constexpr int kHeading = 26;  // a product's heading
constexpr int kCellsX = 210;  // where cells start, past the name
constexpr int kMargin = 8;
constexpr int kWidth = kCellsX + static_cast<int>(kSvgMaxCellsPerNode) * kPitch + 80;

struct Style {
  SvgCell kind;
  const char* css_class;
  const char* fill;
  const char* legend;
};
constexpr Style kStyles[kSvgCellKinds] = {
    {SvgCell::kAllocated, "a", "#4c72b0", "GPU allocated"},
    {SvgCell::kIdle, "i", "#8fd18f", "GPU idle"},
    {SvgCell::kFragmented, "f", "#e07b39", "GPU idle, fragmented (FGD)"},
    {SvgCell::kMigAllocated, "ma", "#7b4ea3", "MIG slice allocated"},
    {SvgCell::kMigFree, "mf", "#d9c6ee", "MIG slice free"},
    {SvgCell::kSharedAllocated, "sa", "#3a8a8c", "shared replica allocated"},
    {SvgCell::kSharedFree, "sf", "#bfe6e6", "shared replica free"},
};

// Length of the UTF-8 sequence starting at s[i] when it is valid (no overlongs, surrogates or
// code points past U+10FFFF) and allowed in XML 1.0; 0 otherwise.
size_t ValidXmlChar(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') && c != 0x7f ? 1 : 0;
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
      cp == 0xffff) {
    return 0;
  }
  return n;
}

// At most `max_chars` characters of `text` (valid characters counted, invalid bytes as one),
// then "..." when cut; escaped.
std::string Label(std::string_view text, size_t max_chars) {
  size_t i = 0;
  size_t chars = 0;
  while (i < text.size() && chars < max_chars) {
    size_t n = ValidXmlChar(text, i);
    i += n == 0 ? 1 : n;
    ++chars;
  }
  std::string out = XmlEscape(text.substr(0, i));
  if (i < text.size()) out += "...";
  return out;
}

void Add(SvgNodeRow& row, SvgCell kind, int64_t n) {
  if (n <= 0) return;
  row.counts[static_cast<size_t>(kind)] += n;
  // The cells kept stop at the cap; counts hold everything.
  size_t room =
      kSvgMaxCellsPerNode + 1 > row.cells.size() ? kSvgMaxCellsPerNode + 1 - row.cells.size() : 0;
  row.cells.insert(row.cells.end(), static_cast<size_t>(std::min<int64_t>(n, room)), kind);
}

void Rect(std::string& out, SvgCell kind, int x, int y) {
  out += "<rect class=\"";
  out += SvgCellClass(kind);
  out += "\" x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
         std::to_string(kCell) + "\" height=\"" + std::to_string(kCell) + "\"/>";
}

}  // namespace

std::string_view SvgCellClass(SvgCell kind) { return kStyles[static_cast<size_t>(kind)].css_class; }

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = ValidXmlChar(text, i);
    if (n == 0) {
      out += '?';
      ++i;
      continue;
    }
    switch (text[i]) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::vector<SvgNodeRow> CapacitySvgRows(const ClusterSnapshot& snapshot) {
  // The default policy's target workload, as the fragmentation gauge and the report measure.
  const std::vector<WeightedShape> workload =
      LiveTargetWorkload(snapshot.observed(), snapshot.standard_workload(), {});
  IdleBuffers buffers;
  std::vector<SvgNodeRow> rows;
  for (const auto& node : snapshot.nodes()) {
    SvgNodeRow row;
    row.name = node->info.name;
    row.product = node->info.gpu.product.empty() ? std::string(kNoGroup) : node->info.gpu.product;
    int64_t gpus = 0, gpus_used = 0;
    std::map<std::string, std::pair<int64_t, int64_t>> mig;  // profile resource: units, used
    int64_t shared = 0, shared_used = 0;
    for (const auto& r : node->info.allocatable) {
      int64_t units = std::max<int64_t>(0, r.milli / 1000);
      int64_t used = std::clamp<int64_t>(node->used.units(r.name), 0, units);
      // A unit of nvidia.com/gpu is drawn as what it is: a GPU, a replica or a MIG slice.
      GpuUnitKind kind =
          r.name == kGpuResource ? GpuUnitOf(node->info, r.name).kind : GpuUnitKind::kWholeGpu;
      if (r.name == kGpuResource && kind == GpuUnitKind::kWholeGpu) {
        gpus += units;
        gpus_used += used;
      } else if (IsMigSliceResource(r.name) || kind == GpuUnitKind::kMigSlice) {
        mig[r.name] = {units, used};
      } else if (r.name == kSharedGpuResource || kind == GpuUnitKind::kReplica) {
        shared += units;
        shared_used += used;
      }
    }
    if (gpus == 0 && mig.empty() && shared == 0) continue;
    // The device part of the node's fragment: its MIG slices left out, MIG shapes measure none.
    NodeIdle idle = IdleOf(*node, snapshot.device_model(), buffers);
    idle.mig_free = {};
    const int64_t gpus_idle = gpus - gpus_used;
    const int64_t fragmented = std::clamp<int64_t>(
        std::llround(NodeFragmentMilli(idle, workload) / kMilliPerGpu), 0, gpus_idle);
    Add(row, SvgCell::kAllocated, gpus_used);
    Add(row, SvgCell::kFragmented, fragmented);
    Add(row, SvgCell::kIdle, gpus_idle - fragmented);
    for (const auto& [resource, units] : mig) {
      Add(row, SvgCell::kMigAllocated, units.second);
      Add(row, SvgCell::kMigFree, units.first - units.second);
    }
    Add(row, SvgCell::kSharedAllocated, shared_used);
    Add(row, SvgCell::kSharedFree, shared - shared_used);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string FormatCapacitySvg(const CapacityReport& report, const ClusterSnapshot& snapshot) {
  std::vector<SvgNodeRow> rows = CapacitySvgRows(snapshot);
  std::map<std::string, std::vector<const SvgNodeRow*>> by_product;
  for (const auto& row : rows) by_product[row.product].push_back(&row);

  std::string body;
  int y = kMargin + 16;
  body += "<text class=\"t\" x=\"" + std::to_string(kMargin) + "\" y=\"" + std::to_string(y) +
          "\">capacity of " +
          XmlEscape(report.inventory.empty() ? "the inventory" : report.inventory) + ": " +
          std::to_string(report.cluster.nodes) + " GPU nodes, " +
          FormatGpus(report.cluster.gpus.total) + " GPUs, " +
          FormatGpus(report.cluster.gpus.allocated) + " allocated, " +
          FormatGpus(report.cluster.gpus.idle) + " idle, " +
          FormatGpus(report.cluster.gpus.fragmented) + " fragmented</text>\n";
  // The legend: one swatch per kind, in two lines.
  y += 10;
  for (size_t k = 0; k < kSvgCellKinds; ++k) {
    int col = static_cast<int>(k % 4), line = static_cast<int>(k / 4);
    int x = kMargin + col * 230;
    int ly = y + line * 16;
    Rect(body, kStyles[k].kind, x, ly);
    body += "<text x=\"" + std::to_string(x + kPitch + 2) + "\" y=\"" + std::to_string(ly + 9) +
            "\">" + kStyles[k].legend + "</text>\n";
  }
  y += 2 * 16 + 4;
  body += "<text x=\"" + std::to_string(kMargin) + "\" y=\"" + std::to_string(y + 9) +
          "\">GPU figures: whole GPUs plus MIG slices by compute slices; a row shows at most " +
          std::to_string(kSvgMaxCellsPerNode) + " cells</text>\n";
  y += 8;
  for (const auto& [product, members] : by_product) {
    y += kHeading;
    std::string figures;
    if (auto it = report.products.find(product); it != report.products.end()) {
      const GpuFigures& g = it->second.gpus;
      figures = ": " + FormatGpus(g.total) + " GPUs, " + FormatGpus(g.allocated) + " allocated, " +
                FormatGpus(g.idle) + " idle, " + FormatGpus(g.fragmented) + " fragmented";
      if (g.shared_replicas > 0) {
        figures += ", " + std::to_string(g.shared_allocated) + "/" +
                   std::to_string(g.shared_replicas) + " shared replicas";
      }
    }
    body += "<text class=\"h\" x=\"" + std::to_string(kMargin) + "\" y=\"" + std::to_string(y - 8) +
            "\">" + Label(product, 80) + " (" + std::to_string(members.size()) +
            (members.size() == 1 ? " node)" : " nodes)") + figures + "</text>\n";
    for (const SvgNodeRow* row : members) {
      body += "<g class=\"n\"><text x=\"" + std::to_string(kMargin) + "\" y=\"" +
              std::to_string(y + 9) + "\">" + Label(row->name, kSvgNameChars) + "</text>";
      size_t drawn = std::min(row->cells.size(), kSvgMaxCellsPerNode);
      for (size_t c = 0; c < drawn; ++c) {
        Rect(body, row->cells[c], kCellsX + static_cast<int>(c) * kPitch, y);
      }
      int64_t total = 0;
      for (int64_t n : row->counts) total += n;
      if (total > static_cast<int64_t>(drawn)) {
        body += "<text x=\"" + std::to_string(kCellsX + static_cast<int>(drawn) * kPitch + 4) +
                "\" y=\"" + std::to_string(y + 9) + "\">+" +
                std::to_string(total - static_cast<int64_t>(drawn)) + " more</text>";
      }
      body += "</g>\n";
      y += kRow;
    }
  }
  const int height = y + kMargin;

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
         "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) +
         " " + std::to_string(height) + "\">\n<style>text{font:11px monospace;fill:#222}" +
         ".t{font-size:13px;font-weight:bold}.h{font-weight:bold}";
  for (const auto& s : kStyles) out += std::string(".") + s.css_class + "{fill:" + s.fill + "}";
  out += "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace gpusched
