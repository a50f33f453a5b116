// `gpusched defrag-plan`: for GPU pods that wait because no node takes them, the fewest pods to
// move so that one does, where each would go and the GPUs freed (gpusched/planning/defrag_plan.h),
// as text or JSON. Advice only: it reads the cluster once (nodes, pods and, from an API server or
// a --cluster file, PodDisruptionBudgets) and writes nothing to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/app/report_options.h"
#include "gpusched/cli/flags.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct DefragPlanCommandOptions {
  ReportOptions report;       // the view and --json
  std::string pod_namespace;  // with pod_name: plan for that pod only; empty: every waiting pod
  std::string pod_name;

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<DefragPlanCommandOptions> FromFlags(const FlagSet& flags);
};

// Runs the command on its arguments (after the command name); returns the exit code: 0 with a
// report (plans or reasons why none), 2 for bad flags, an unreadable inventory, a --pod that is
// no waiting GPU pod, or PodDisruptionBudgets the API server would not list.
int RunDefragPlanCommand(const std::vector<std::string>& args);

}  // namespace gpusched
