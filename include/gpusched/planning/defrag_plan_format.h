// The defragmentation plans (gpusched/planning/defrag_plan.h) as `gpusched defrag-plan` prints
// them: a paragraph per waiting pod, or one JSON object. Names from the cluster are quoted in the
// text. Pure; thread-safe.
#pragma once

#include <string>

#include "gpusched/planning/defrag_plan.h"

namespace gpusched {

// One paragraph per waiting pod under a heading.
std::string FormatDefragPlanText(const DefragReport& report);
// {"inventory", "policy", "budgets", "budgetsSkipped", "waiting", "plans": [{"pod", "profile",
// "priority", "requests": {resource: units}, "outcome": "fits-now" | "plan" | "no-plan" |
// "domain-plan" | "covered", "node", "moves": [{"pod", "from", "to", "gpus"}], "gpusFreed",
// "searchCut", "why"}]}; a plan about a pod group adds "group": {"key", "size", "toPlace"}, and
// where they apply "domain": {"level", "name"}, "memberNodes": [node per member to place] and
// "coveredBy" (the pod whose domain plan places it).
std::string FormatDefragPlanJson(const DefragReport& report);

}  // namespace gpusched
