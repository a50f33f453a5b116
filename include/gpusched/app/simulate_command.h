// `gpusched simulate`: the packing benchmark (gpusched/sim/sim_batch.h) over an openb trace or a
// scenario, with its report as a table and optional JSON, CSV and SVG files.
#ifndef GPUSCHED_APP_SIMULATE_COMMAND_H_
#define GPUSCHED_APP_SIMULATE_COMMAND_H_

#include <optional>
#include <string>
#include <vector>

#include "gpusched/cli/flags.h"
#include "gpusched/sim/report.h"
#include "gpusched/sim/sim_batch.h"

namespace gpusched {

struct SimulateCommandOptions {
  SimBatch batch;          // policies resolved (files loaded), seeds, jobs and the base options
  std::string nodes_path;  // with pods_path, an openb trace; empty with a scenario
  std::string pods_path;
  std::string scenario_path;
  ReportInputs report;  // what the report says of the run
  std::string out_json, out_csv, out_svg;
  bool progress = true;

  static FlagSet Flags();
  // The options `flags` give, policy files loaded; nullopt, with `error` set (and the policy
  // files' own errors printed), when one is invalid.
  static std::optional<SimulateCommandOptions> FromFlags(const FlagSet& flags, std::string& error);
};

int RunSimulateCommand(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_APP_SIMULATE_COMMAND_H_
