// What the planning reports' bounded listings share: the one top-N-plus-other rule (a report's
// groups, a gauge's label values) and the one row of a gauge a report hands to its producer's
// WriteSeries. planning/ does not include metrics/: the gauges are plain rows, written as series
// by the reports worker (gpusched/app/reports_worker.h). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace gpusched {

// One gauge sample: the value of its first label (a product, a shape), of its second (a state, a
// shape, a reason; empty for a gauge with one label), and its value.
struct GaugeRow {
  std::string group;
  std::string label;
  double value = 0;
};

// Each name of `weights` mapped to the name it is listed under: itself for the `n` heaviest (ties
// by name), `other` for the rest.
std::map<std::string, std::string> TopOrOther(const std::map<std::string, double>& weights,
                                              size_t n, std::string_view other);

}  // namespace gpusched
