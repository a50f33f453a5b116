#include "gpusched/sim/node_sampling.h"

#include <algorithm>

namespace gpusched {

size_t NumFeasibleNodesToFind(int percentage, size_t all_nodes) {
  // schedule_one.go's minFeasibleNodesToFind and minFeasibleNodesPercentageToFind, and the
  // adaptive percentage's base and slope.
  constexpr size_t kMinFeasibleNodes = 100;
  constexpr size_t kMinFeasiblePercentage = 5;
  constexpr size_t kAdaptiveBasePercentage = 50;
  constexpr size_t kNodesPerAdaptivePoint = 125;
  if (all_nodes < kMinFeasibleNodes || percentage >= 100) return all_nodes;
  size_t pct = static_cast<size_t>(std::max(percentage, 0));
  if (pct == 0) {
    size_t drop = all_nodes / kNodesPerAdaptivePoint;
    pct = drop >= kAdaptiveBasePercentage - kMinFeasiblePercentage ? kMinFeasiblePercentage
                                                                   : kAdaptiveBasePercentage - drop;
  }
  return std::max(all_nodes * pct / 100, kMinFeasibleNodes);
}

}  // namespace gpusched
