#include "gpusched/packing/in_tree_scores.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {

bool InTreeFits(const NodeState& node, const PodInfo& pod) {
  if (int64_t{node.pod_count} + 1 > node.info.allocatable.units("pods")) return false;
  for (const auto& r : pod.requests) {
    if (r.milli > 0 && node.used.milli(r.name) + r.milli > node.info.allocatable.milli(r.name)) {
      return false;
    }
  }
  return true;
}

int64_t InTreeScoreOf(InTreeScore strategy, const NodeState& node, const PodInfo& pod) {
  struct Weighted {
    std::string_view resource;
    int64_t weight;
    int64_t divisor;  // milli-units per unit the scheduler counts in
  };
  static const Weighted kLeast[] = {{"cpu", 1, 1}, {"memory", 1, 1000}};
  static const Weighted kMost[] = {{kGpuResource, 5, 1}, {"cpu", 1, 1}, {"memory", 1, 1000}};
  std::span<const Weighted> resources = strategy == InTreeScore::kMostAllocated
                                            ? std::span<const Weighted>(kMost)
                                            : std::span<const Weighted>(kLeast);
  int64_t sum = 0;
  int64_t weights = 0;
  for (const auto& r : resources) {
    // A node without the resource, or an extended resource the pod does not ask for, is left out
    // of the score and of the weights (resource_allocation.go, v1.26): a CPU-only pod's
    // MostAllocated score is its cpu and memory alone.
    const bool extended = r.resource != "cpu" && r.resource != "memory";
    int64_t capacity = node.info.allocatable.milli(r.resource) / r.divisor;
    if (capacity <= 0 || (extended && pod.requests.milli(r.resource) == 0)) continue;
    int64_t requested = (node.used.milli(r.resource) + pod.requests.milli(r.resource)) / r.divisor;
    int64_t score = strategy == InTreeScore::kMostAllocated
                        ? MostRequestedScore(requested, capacity)
                        : (requested > capacity ? 0 : (capacity - requested) * 100 / capacity);
    sum += score * r.weight;
    weights += r.weight;
  }
  return weights == 0 ? 0 : sum / weights;
}

// kube-scheduler's NodeResourcesBalancedAllocation score (cpu and memory, v1.26): 100 x (1 - the
// standard deviation of the requested fractions, each capped at 1), with the pod placed.
int64_t BalancedScoreOf(const NodeState& node, const PodInfo& pod) {
  double fractions[2];
  size_t n = 0;
  for (const char* r : {"cpu", "memory"}) {
    int64_t allocatable = node.info.allocatable.milli(r);
    if (allocatable <= 0) continue;
    double requested = static_cast<double>(node.used.milli(r) + pod.requests.milli(r));
    fractions[n++] = std::min(requested / static_cast<double>(allocatable), 1.0);
  }
  double std = n == 2 ? std::abs(fractions[0] - fractions[1]) / 2 : 0;
  return static_cast<int64_t>((1 - std) * 100);
}

std::optional<InTreeScore> ParseBlendMode(std::string_view text) {
  if (text == "least-allocated") return InTreeScore::kLeastAllocated;
  if (text == "most-allocated") return InTreeScore::kMostAllocated;
  return std::nullopt;
}

}  // namespace gpusched
