// `gpusched capacity`: what fits in the cluster now (gpusched/planning/capacity.h), as tables,
// JSON or a picture.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/app/report_options.h"
#include "gpusched/cli/flags.h"
#include "gpusched/planning/capacity_topology.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct CapacityCommandOptions {
  ReportOptions report;    // the view and --json
  std::string pool_label;  // empty: no pools
  std::vector<GroupShape> group_shapes;
  std::string svg_path;  // empty: no picture

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<CapacityCommandOptions> FromFlags(const FlagSet& flags);
};

// Runs the command on its arguments (after the command name); returns the exit code.
int RunCapacityCommand(const std::vector<std::string>& args);

}  // namespace gpusched
