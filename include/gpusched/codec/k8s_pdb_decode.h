// Decoding of a policy/v1 PodDisruptionBudget from JSON (simdjson On-Demand) into the
// DisruptionBudget planning reads (gpusched/model/disruption_budget.h).
//
// Read: metadata.name and namespace, spec.selector (matchLabels, matchExpressions) and
// status.disruptionsAllowed; everything else is skipped. JSON of the wrong shape (a selector that
// is no object, an expression list that is no array, a disruptionsAllowed that is no integer)
// throws DecodeError naming the field, and the caller skips and counts the object. A selector
// Kubernetes would refuse, or one past the selector budget, is decoded as unreadable (it then
// protects its whole namespace), never as a narrower selector. disruptionsAllowed is clamped to
// 0..INT32_MAX. Reentrant.
#pragma once

#include <simdjson.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/model/disruption_budget.h"

namespace gpusched {

DisruptionBudget DecodeDisruptionBudget(simdjson::ondemand::object object);

}  // namespace gpusched
