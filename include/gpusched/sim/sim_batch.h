// A batch of simulator runs, as `gpusched simulate` compares policies: every (policy, seed) pair
// placed on a pool of worker threads, then summarised per policy in the order given. Also resolves
// the policy names of the command line. Runs are independent and deterministic, so the summary
// does not depend on the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/report.h"
#include "gpusched/sim/simulator.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct SimBatch {
  std::vector<SimPolicy> policies;  // summarised in this order
  std::vector<uint64_t> seeds;
  SimOptions base;  // each run's seed and progress are set by the batch
  int jobs = 1;     // runs at a time
};

// Runs the batch. `progress(share)` reports the share (0..1) of all runs' pods placed; it is
// called from the worker threads, one call at a time, and may be empty.
std::vector<PolicySummary> RunSimBatch(const std::vector<TraceNode>& nodes,
                                       const std::vector<TracePod>& pods, const SimBatch& batch,
                                       const std::function<void(double)>& progress = {});

// The policies `names` name: built-in names (BuiltinSimPolicyNames) or policy files (a name with
// a '/' or ending in .yaml or .yml). Stops at the first bad name, whose problem is one line naming
// it, after the policy file's own FILE:LINE:COLUMN problems.
Validated<std::vector<SimPolicy>> ResolveSimPolicies(const std::vector<std::string>& names);

}  // namespace gpusched
