// `gpusched mig-advice`: which idle MIG-capable nodes to repartition for the MIG slices pending
// pods wait for (gpusched/planning/mig_advice.h), as `kubectl label` lines or JSON. Advice only:
// it reads the cluster once and writes nothing to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/app/report_options.h"
#include "gpusched/cli/flags.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct MigAdviceCommandOptions {
  ReportOptions report;         // the view and --json
  std::string mig_config_path;  // empty: the bundled layouts

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<MigAdviceCommandOptions> FromFlags(const FlagSet& flags);
};

// Runs the command on its arguments (after the command name); returns the exit code: 0 with
// advice or none, 2 for bad flags, an unreadable inventory or an invalid layouts file (each of
// its errors printed to stderr as FILE:LINE:COLUMN: KEY: PROBLEM).
int RunMigAdviceCommand(const std::vector<std::string>& args);

}  // namespace gpusched
