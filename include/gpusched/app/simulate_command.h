// `gpusched simulate`: the packing benchmark (gpusched/sim/sim_batch.h) over an openb trace or a
// scenario, with its report as a table and optional JSON, CSV and SVG files.
#pragma once

#include <string>
#include <vector>

#include "gpusched/cli/flags.h"
#include "gpusched/sim/report.h"
#include "gpusched/sim/sim_batch.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct SimulateCommandOptions {
  // Seeds, jobs and the base options; its policies are resolved when the command runs, as a name
  // may be a file.
  SimBatch batch;
  std::vector<std::string> policy_names;  // built-in names or policy files
  std::string nodes_path;                 // with pods_path, an openb trace; empty with a scenario
  std::string pods_path;
  std::string scenario_path;
  ReportInputs report;  // what the report says of the run
  std::string out_json, out_csv, out_svg;
  bool progress = true;

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<SimulateCommandOptions> FromFlags(const FlagSet& flags);
};

int RunSimulateCommand(const std::vector<std::string>& args);

}  // namespace gpusched
