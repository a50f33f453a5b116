// The live target workload: the task shapes fragmentation is measured against in a running
// cluster, where no trace says what will come.
//
// Two parts, blended by the policy: the expected shapes (by default the standard whole-GPU
// sizes, 1, 2, 4, ... GPUs up to each node size the cluster has, so an empty cluster already
// values whole nodes, and one slice of each MIG profile the nodes offer) and the observed shapes
// (every GPU or MIG pod seen, bound or pending, counted once with exponential decay). The expected
// shapes also weigh like a number of pods of their own, so the first few pods seen cannot outweigh
// them: in a burst, which pods the watch happened to report before a decision must not decide it.
// Pure functions and value types; not synchronized.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// How much the expected shapes weigh against the observed ones once many pods are seen, and how
// many pods they weigh like while few are, unless a policy says otherwise.
inline constexpr double kDefaultPriorShare = 0.1;
inline constexpr double kDefaultPriorPods = 16;

// A policy's say on the target workload: the expected shapes (empty: the standard ones), their
// share in the blend, and the pods they weigh like.
struct TargetWorkloadSettings {
  double prior_share = kDefaultPriorShare;
  double prior_pods = kDefaultPriorPods;
  std::vector<WeightedShape> expected;  // weights sum to 1

  bool is_default() const {
    return prior_share == kDefaultPriorShare && prior_pods == kDefaultPriorPods && expected.empty();
  }
};

// The shapes seen, with their shares, and how many pods (decayed) those shares stand for.
struct ObservedWorkload {
  std::vector<WeightedShape> shapes;  // weights sum to 1, or empty
  double pods = 0;
};

// The standard shapes for nodes of the given whole-GPU counts and MIG profiles: for each count N,
// tasks of 1, 2, 4, ... GPUs below N and of N itself; for each profile, a task of one slice of
// it. The shapes of each kind weigh alike and sum to 1 (the device shapes, and the MIG shapes).
std::vector<WeightedShape> StandardShapes(const std::set<int64_t>& node_gpu_counts,
                                          const std::set<std::string>& mig_profiles = {});

// The expected shapes' share of the blend after `observed_pods` pods: prior_share when many pods
// are seen, rising to 1 as fewer are (prior_share + (1 - prior_share) x P / (P + observed_pods),
// P = prior_pods). Settings out of range are clamped; the result is within [0, 1].
double PriorShareAfter(const TargetWorkloadSettings& settings, double observed_pods);

// (1 - prior_share) x observed + prior_share x prior, merged by shape; one side alone when the
// other is empty. `prior_share` is clamped to [0, 1]. Weights sum to 1 (or the result is empty).
std::vector<WeightedShape> BlendWorkloads(std::span<const WeightedShape> observed,
                                          std::span<const WeightedShape> prior, double prior_share);

// The target workload of a live cluster under `settings`, per kind of capacity (device shapes,
// then MIG shapes): the observed shapes of that kind among FGD's common shapes of all observed
// (CommonShapes), blended with the expected shapes of that kind (settings.expected, else
// `standard`) by PriorShareAfter of the pods seen of that kind. The weights of each kind sum to 1.
// What fgd scores against and the fragmentation gauge measures.
std::vector<WeightedShape> LiveTargetWorkload(const ObservedWorkload& observed,
                                              std::span<const WeightedShape> standard,
                                              const TargetWorkloadSettings& settings);

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
  // The shapes with their share of the decayed count, and that count, both as of the last pod
  // added (shares would not change later, every count decays alike; the count is kept as it was so
  // the same pods always give the same workload).
  ObservedWorkload Observed() const;

 private:
  void DecayTo(Clock::time_point now);

  Clock::duration half_life_;
  Clock::time_point as_of_{};
  std::map<TaskShape, double> counts_;
};

// The standard workload (StandardShapes) of the most common whole-GPU node sizes and the MIG
// profiles offered by the most nodes, at most kMaxStandardSizes of each: the cost of every scored
// node grows with its shapes. What the live server's snapshots carry as the expected shapes.
inline constexpr size_t kMaxStandardSizes = 8;
std::vector<WeightedShape> StandardWorkloadOf(std::span<const NodeInfo* const> nodes);

}  // namespace gpusched
