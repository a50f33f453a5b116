// The why-pending report (gpusched/planning/why_pending.h) as `gpusched why-pending` prints it:
// an aligned table, or one JSON object (also served by GET /why-pending), and its gauges, as the
// reports worker writes them. Every name and reason from the inventory is quoted here
// (QuoteForMessage: printable ASCII, at most kMaxPendingTextBytes), in all three alike. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/planning/report_rows.h"
#include "gpusched/planning/why_pending.h"

namespace gpusched {

// A heading, then one row per group: SHAPE, REASON, PODS, OLDEST (3d4h, 2h5m, 40s, - unknown),
// PODS SAMPLE.
std::string FormatWhyPendingText(const WhyPendingReport& report);
// One JSON object: {"inventory", "policy", "nowUnix", "pending", "judged", "skipped", "groups":
// [{"shape", "reason", "pods", "oldestWaitSeconds" (null when unknown), "sample": [...]}]}.
std::string FormatWhyPendingJson(const WhyPendingReport& report);

// Longest pod name (namespace/name), shape and reason written, once quoted.
inline constexpr size_t kMaxPendingTextBytes = 300;

// Shapes and reasons with a label of their own in the pending gauges, the most pods first (ties
// by text, TopOrOther); the others are summed as kOtherPending, so gpusched_pending_pods has at
// most (kMaxGaugeShapes + 1) x (kMaxGaugeReasons + 1) series.
inline constexpr size_t kMaxGaugeShapes = 16;
inline constexpr size_t kMaxGaugeReasons = 16;
inline constexpr std::string_view kOtherPending = "other";

// gpusched_pending_pods{shape,reason} (GaugeRow: the shape, then the reason) and
// gpusched_pending_oldest_seconds{shape} (the shape, an empty label) of `report`: the oldest wait
// at report.now_unix; shapes without a known creation time are left out.
void WhyPendingGaugesOf(const WhyPendingReport& report, std::vector<GaugeRow>& pods,
                        std::vector<GaugeRow>& oldest, size_t max_shapes = kMaxGaugeShapes,
                        size_t max_reasons = kMaxGaugeReasons);

}  // namespace gpusched
