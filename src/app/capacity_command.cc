#include "gpusched/app/capacity_command.h"

#include <fstream>
#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/app/report_signals.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/planning/capacity_svg.h"

namespace gpusched {

FlagSet CapacityCommandOptions::Flags() {
  FlagSet flags = ReportOptions::Flags(
      "capacity",
      "Shows what fits in the cluster now, per GPU product (and per node pool with --pool-label):\n"
      "GPUs total, allocated, idle and idle but fragmented (FGD's measure against the target\n"
      "workload), and how many more pods of each standard shape fit (1, 2, 4, 8 GPUs, one slice\n"
      "of every MIG profile offered, one gpu.shared replica), each shape counted alone, placed\n"
      "one by one through the same engine and policy as serve. Reads the inventory once; never\n"
      "writes to the cluster.",
      "tables");
  flags
      .Add({"pool-label", "KEY", "",
            "also group nodes by this node label, nodes without it under (none); an nvidia.com/ "
            "label (such as nvidia.com/gpu.family), the only ones gpusched keeps of a node"})
      .Add({"group-shape", "LIST", std::string(kDefaultGroupShapes),
            "multi-node jobs to count per topology domain: comma-separated NxG, N pods (1..4096) "
            "of G whole GPUs each (1..1024), such as 4x8,16x4; how many fit whole inside one "
            "domain of each topology level (gang-topology's levels)"})
      .Add({"svg", "FILE", "",
            "also write a picture to FILE: every GPU node as a row of cells (allocated, idle, "
            "fragmented, MIG slices, shared replicas), grouped by product"});
  return flags;
}

Validated<CapacityCommandOptions> CapacityCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<CapacityCommandOptions> out;
  out.value = CapacityCommandOptions{out.problems.Take(ReportOptions::FromFlags(flags, "capacity")),
                                     flags.Get("pool-label"),
                                     {},
                                     flags.Get("svg")};
  const std::string& pool_label = out.value.pool_label;
  if (!pool_label.empty() && !IsPinLabel(pool_label)) {
    out.problems.Add("--pool-label " + pool_label +
                     ": gpusched keeps only the nvidia.com/ labels of a node (not "
                     "nvidia.com/gfd.timestamp); name one of those, such as nvidia.com/gpu.family");
  }
  if (auto problem = ParseGroupShapes(flags.Get("group-shape"), out.value.group_shapes);
      !problem.empty()) {
    out.problems.Add("--group-shape " + problem);
  }
  return out;
}

int RunCapacityCommand(const std::vector<std::string>& args) {
  return RunReportCommand<CapacityCommandOptions>(
      args, "capacity", ComputeCapacity,
      [](const CapacityCommandOptions& options) {
        return CapacityOptions{.pool_label = options.pool_label,
                               .group_shapes = options.group_shapes};
      },
      [](const CapacityCommandOptions& options, const ClusterView& view,
         const CapacityReport& report) {
        if (!options.svg_path.empty()) {
          std::ofstream file(options.svg_path, std::ios::binary | std::ios::trunc);
          file << FormatCapacitySvg(report, *view.snapshot);
          file.close();
          if (!file) return Fail("--svg " + options.svg_path + ": cannot write the file");
        }
        options.report.Print(report, FormatCapacityText, FormatCapacityJson);
        return 0;
      });
}

}  // namespace gpusched
