// The why-pending report (gpusched/planning/why_pending.h) as `gpusched why-pending` prints it:
// an aligned table, or one JSON object (also served by GET /why-pending). Every name from the
// inventory was quoted when the report was computed. Pure; thread-safe.
#ifndef GPUSCHED_PLANNING_WHY_PENDING_FORMAT_H_
#define GPUSCHED_PLANNING_WHY_PENDING_FORMAT_H_

#include <string>

#include "gpusched/planning/why_pending.h"

namespace gpusched {

// A heading, then one row per group: SHAPE, REASON, PODS, OLDEST (3d4h, 2h5m, 40s, - unknown),
// PODS SAMPLE.
std::string FormatWhyPendingText(const WhyPendingReport& report);
// One JSON object: {"inventory", "policy", "nowUnix", "pending", "judged", "skipped", "groups":
// [{"shape", "reason", "pods", "oldestWaitSeconds" (null when unknown), "sample": [...]}]}.
std::string FormatWhyPendingJson(const WhyPendingReport& report);

}  // namespace gpusched

#endif  // GPUSCHED_PLANNING_WHY_PENDING_FORMAT_H_
