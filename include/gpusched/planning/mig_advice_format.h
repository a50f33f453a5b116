// The MIG layout advice (gpusched/planning/mig_advice.h) as `gpusched mig-advice` prints it: a
// summary, then a commented `kubectl label` line per advised node (or why none is printed), or one
// JSON object. Every value from the cluster or a file is quoted, so none starts a line of its own.
// Pure; thread-safe.
#pragma once

#include <string>

#include "gpusched/planning/mig_advice.h"

namespace gpusched {

std::string FormatMigAdviceText(const MigAdvice& advice);
// {"inventory", "layouts", "demand": {"slices": {p: n}, "pods": {p: n}, "wholeGpuPods": n,
// "wholeGpuPodsFit": n}, "freeSlices": {p: n}, "candidates": n, "singleStrategyCandidates": n,
// "advice": [{"node", "model", "gpus", "strategy" ("mixed" or "single"), "currentLayout",
// "layout", "serves": {p: n}, "offers": {"gpu": n, "mig-<p>": n}, "command"}], "served": {p: n},
// "stillWaiting": {p: n}, "skipped": {reason: n}}, p a slice name (mig_advice.h: a profile, or a
// MIG product under the single strategy, whose slices a node offers as "gpu").
std::string FormatMigAdviceJson(const MigAdvice& advice);

}  // namespace gpusched
