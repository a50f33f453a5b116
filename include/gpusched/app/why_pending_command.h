// `gpusched why-pending`: the GPU pods waiting for a node, grouped by shape and by the reason
// gpusched's filter gives (gpusched/planning/why_pending.h), as a table or JSON.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/app/report_options.h"
#include "gpusched/cli/flags.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct WhyPendingCommandOptions {
  ReportOptions report;  // the view and --json
  size_t max_pods = 0;   // pods judged at most (WhyPendingOptions::max_pods)

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<WhyPendingCommandOptions> FromFlags(const FlagSet& flags);
};

// Runs the command on its arguments (after the command name); returns the exit code.
int RunWhyPendingCommand(const std::vector<std::string>& args);

}  // namespace gpusched
