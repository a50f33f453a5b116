#include "gpusched/planning/report_rows.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace gpusched {

std::map<std::string, std::string> TopOrOther(const std::map<std::string, double>& weights,
                                              size_t n, std::string_view other) {
  std::vector<std::pair<std::string, double>> order(weights.begin(), weights.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::map<std::string, std::string> listed_as;
  for (size_t i = 0; i < order.size(); ++i) {
    listed_as[order[i].first] = i < n ? order[i].first : std::string(other);
  }
  return listed_as;
}

}  // namespace gpusched
