// The live target workload: the task shapes fragmentation is measured against in a running
// cluster, where no trace says what will come.
//
// Two parts, blended by the policy: the expected shapes (by default the standard whole-GPU
// sizes, 1, 2, 4, ... GPUs up to each node size the cluster has, so an empty cluster already
// values whole nodes) and the observed shapes (every GPU pod seen, bound or pending, counted once
// with exponential decay). Pure functions and a value type; not synchronized.
#ifndef GPUSCHED_PACKING_TARGET_WORKLOAD_H_
#define GPUSCHED_PACKING_TARGET_WORKLOAD_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// How much the expected shapes weigh against the observed ones unless a policy says otherwise.
inline constexpr double kDefaultPriorShare = 0.5;

// A policy's say on the target workload: the expected shapes (empty: the standard ones) and
// their share in the blend.
struct TargetWorkloadSettings {
  double prior_share = kDefaultPriorShare;
  std::vector<WeightedShape> expected;  // weights sum to 1

  bool is_default() const { return prior_share == kDefaultPriorShare && expected.empty(); }
};

// The standard shapes for nodes of the given whole-GPU counts: for each count N, tasks of 1, 2,
// 4, ... GPUs below N and of N itself; every distinct shape weighs the same.
std::vector<WeightedShape> StandardShapes(const std::set<int64_t>& node_gpu_counts);

// (1 - prior_share) x observed + prior_share x prior, merged by shape; one side alone when the
// other is empty. `prior_share` is clamped to [0, 1]. Weights sum to 1 (or the result is empty).
std::vector<WeightedShape> BlendWorkloads(std::span<const WeightedShape> observed,
                                          std::span<const WeightedShape> prior,
                                          double prior_share);

// Counts of task shapes seen, each decaying by half every `half_life`; the weights say what the
// cluster has been asked for lately. Shapes whose count falls below 1/1000 of a pod are dropped,
// so memory follows the shapes of the last few half-lives, and at most kMaxShapes are kept (the
// least counted goes), so pods naming ever new products cannot make every node's score dearer.
class DecayedShapeCounts {
 public:
  static constexpr size_t kMaxShapes = 64;
  using Clock = std::chrono::steady_clock;
  explicit DecayedShapeCounts(Clock::duration half_life = std::chrono::hours(1));

  void Add(const TaskShape& shape, Clock::time_point now);
  // The shapes with their share of the decayed count (shares do not change while nothing is
  // added: every count decays alike).
  std::vector<WeightedShape> Weights() const;

 private:
  void DecayTo(Clock::time_point now);

  Clock::duration half_life_;
  Clock::time_point as_of_{};
  std::map<TaskShape, double> counts_;
};

}  // namespace gpusched

#endif  // GPUSCHED_PACKING_TARGET_WORKLOAD_H_
