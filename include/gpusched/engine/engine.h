// Engine: runs one profile's enabled plugins over candidate nodes for one pod.
//
// Filter: a node passes when every plugin that filters (a FilterPlugin) passes it; otherwise its
// verdict is the first unresolvable rejection, or failing that the first unschedulable one. A pod
// the cycle rejects (an invalid profile choice, a malformed annotation a plugin's Prepare found) is
// rejected everywhere as unresolvable with that reason. Prioritize: each plugin that scores, has a
// positive weight and applies to the pod scores every node (Score, then Normalize); the weighted
// mean of those scores (0..100) is mapped to the extender score 0..10 (MaxExtenderPriority) by the
// profile's ScoreMapping. A pod that asks for no GPU passes every filter; it scores 0 everywhere
// when the engine judges GPU pods only, else it is ranked like any other. Nodes of one content
// class (Candidates) are judged once: plugins judge by content (gpusched/engine/plugin.h), so the
// answers are those of judging every node. The engine enters each node it judges (Cycle::EnterNode)
// and asks every plugin about it before the next, so what plugins share about a node is computed
// once. With best-only (the policy's filterBestOnly), Filter also ranks the nodes that pass and
// demotes all but the best-scored ones to unschedulable (kNotBestReason, rejected by
// kNotBestRejection): kube-scheduler cannot outweigh a filter's answer, so the ranking that makes
// the choice has to be part of it, and Filter pays one scoring pass over the passing nodes.
// Immutable after construction; safe for concurrent use from multiple threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/engine/candidates.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/resolved_pod.h"

namespace gpusched {

inline constexpr int64_t kMaxExtenderPriority = 10;
// The extender points between two ranks of ScoreMapping::kRank.
inline constexpr int64_t kRankStep = 2;
// What rejected a node when no plugin did: the cycle rejected the pod (Cycle::Reject).
inline constexpr std::string_view kPolicyRejection = "policy";
// With best-only: the reason, and the rejecter, of passing nodes left out.
inline constexpr std::string_view kNotBestReason = "gpusched prefers other nodes";
inline constexpr std::string_view kNotBestRejection = "best-only";

enum class ScoreMapping {
  kLinear,  // round(mean / 10)
  kMinMax,  // rescale so the best candidate gets 10 and the worst 0 (linear when all are equal)
  // By rank among the distinct weighted means: the best gets 10, the next best 8, then 6, 4, 2,
  // the sixth and below 0. Every step is worth kRankStep extender points: with the README's
  // weight 5 that is 100 in kube-scheduler's sum, as much as its LeastAllocated can differ between
  // two nodes, so gpusched's order among its best nodes survives the blend.
  kRank,
};

struct WeightedPlugin {
  std::unique_ptr<Plugin> plugin;
  double weight = 0;  // 0: not scored; ignored for a plugin that does not score
};

// One plugin's part in a node's score.
struct PluginScore {
  std::string_view plugin;
  double weight = 0;
  double score = 0;  // after Normalize, 0..100
};

// Everything the engine decided about one node, for `gpusched explain`.
struct NodeEvaluation {
  Verdict verdict;
  std::string_view rejected_by;  // plugin name; empty when passed
  std::vector<PluginScore> scores;
  double combined = 0;  // weighted mean, 0..100
  int64_t score = 0;    // extender score, 0..10
};

// filterBestOnly's rule, the one function the engine, the server and the simulator apply it by.
// Per node, `combined` holds its weighted mean (0..100) when it passed, kFailedNode when it did
// not, and kUnrankedNode when it passed unscored (a node the inventory lacks). The answer says, per
// node, whether best-only leaves it out: a ranked node below the highest (ties all kept), or an
// unranked one when some ranked node passed. A node that did not pass is never left out by it.
inline constexpr double kFailedNode = -1;
inline constexpr double kUnrankedNode = -2;
std::vector<bool> LeftOutByBestOnly(std::span<const double> combined);

// How an engine judges, beyond its plugins: a profile's settings and the policy's.
struct EngineOptions {
  ScoreMapping mapping = ScoreMapping::kLinear;
  // Pods that ask for no GPU pass everywhere and score 0. Off by default, as in a policy profile
  // (ProfileSpec::gpu_pods_only), so an engine built by hand judges what a profile's would.
  bool gpu_pods_only = false;
  bool best_only = false;  // Filter passes only the best-scored of the passing nodes
};

class Engine {
 public:
  Engine(GpuResourceNames gpu_names, std::vector<WeightedPlugin> plugins,
         EngineOptions options = {});

  // The cycle for `pod`, whose demand is resolved (model/resolved_pod.h; Policy::Judge resolves
  // it); it borrows what `pod` borrows and `snapshot`, which must outlive it. A non-empty
  // `selection_error` (from choosing the profile) rejects the pod everywhere. A pod whose demand
  // is not all modelled passes everywhere and scores 0 (Cycle::unmodelled).
  std::unique_ptr<Cycle> NewCycle(ResolvedPod pod, const ClusterSnapshot& snapshot,
                                  std::string_view selection_error = {}) const;

  // One verdict per node, in order. With `rejected_by`, also the name of the plugin that rejected
  // each node ("" when it passed; kPolicyRejection when the cycle rejected the pod,
  // kNotBestRejection when best-only left it out).
  std::vector<Verdict> Filter(const Cycle& cycle, const Candidates& nodes,
                              std::vector<std::string_view>* rejected_by = nullptr) const;
  // One score in [0, kMaxExtenderPriority] per node, in order.
  std::vector<int64_t> Prioritize(const Cycle& cycle, const Candidates& nodes) const;
  // Filter (without best-only's demotions), then score the nodes that pass, keeping every plugin's
  // part.
  std::vector<NodeEvaluation> Evaluate(const Cycle& cycle, const Candidates& nodes) const;

  // The same, each node a class of its own.
  std::vector<Verdict> Filter(const Cycle& cycle, std::span<const NodeState* const> nodes,
                              std::vector<std::string_view>* rejected_by = nullptr) const {
    return Filter(cycle, Candidates{nodes, {}, 0, {}, {}}, rejected_by);
  }
  std::vector<int64_t> Prioritize(const Cycle& cycle,
                                  std::span<const NodeState* const> nodes) const {
    return Prioritize(cycle, Candidates{nodes, {}, 0, {}, {}});
  }
  std::vector<NodeEvaluation> Evaluate(const Cycle& cycle,
                                       std::span<const NodeState* const> nodes) const {
    return Evaluate(cycle, Candidates{nodes, {}, 0, {}, {}});
  }

  const GpuResourceNames& gpu_names() const { return gpu_names_; }
  const std::vector<WeightedPlugin>& plugins() const { return plugins_; }

 private:
  // Per node, its verdict and the index of the plugin that rejected it (-1 when passed): the
  // filters by content, then the filters by name on the nodes those passed.
  std::vector<std::pair<Verdict, int>> FilterAll(const Cycle& cycle, const Candidates& nodes) const;
  // The filters by content, judging one node per class, and asking plugins that ignore native
  // resources once per GPU class.
  std::vector<std::pair<Verdict, int>> FilterByContent(const Cycle& cycle,
                                                       const Candidates& nodes) const;
  // Best-only's step: demotes every passing entry of `judged` (FilterAll's for `nodes`) but the
  // best-scored ones, marking them kNotBest.
  void KeepBestOnly(const Cycle& cycle, const Candidates& nodes,
                    std::vector<std::pair<Verdict, int>>& judged) const;
  static constexpr int kNotBest = -2;  // in FilterAll's plugin index: demoted by best-only
  // The rejected_by name for FilterAll's plugin index of a node that did not pass.
  std::string_view RejecterName(int plugin) const;
  // Per scoring plugin (index into plugins_), the normalized scores of `nodes`.
  std::vector<std::pair<size_t, std::vector<double>>> ScoreAll(const Cycle& cycle,
                                                               const Candidates& nodes) const;
  // Weighted means (0..100) from ScoreAll's table.
  static std::vector<double> Combine(
      const std::vector<std::pair<size_t, std::vector<double>>>& table,
      const std::vector<WeightedPlugin>& plugins, size_t node_count);
  std::vector<int64_t> MapScores(const std::vector<double>& combined) const;
  // Pods it says nothing of: pods asking for no GPU under gpu_pods_only, and pods whose demand it
  // does not all model. They pass everywhere and score 0.
  bool Ignores(const Cycle& cycle) const {
    return (options_.gpu_pods_only && cycle.gpu_demand().empty()) || !cycle.unmodelled().empty();
  }

  GpuResourceNames gpu_names_;
  std::vector<WeightedPlugin> plugins_;
  // The plugins asked at each extension point, in plugins_'s order, each with its index there:
  // those that prepare, those that filter (by content, by name), and those that score with a
  // positive weight (by content or by name).
  template <class Point>
  struct At {
    size_t index;
    const Point* plugin;
  };
  struct Scorer {
    size_t index;
    const ScoreExtensions* common;
    const ScorePlugin* by_content;  // one of the two
    const NameScorePlugin* by_name;
  };
  std::vector<const PreparePlugin*> preparers_;
  std::vector<At<FilterPlugin>> filters_;
  std::vector<At<NameFilterPlugin>> name_filters_;
  std::vector<Scorer> scorers_;
  EngineOptions options_;
};

}  // namespace gpusched
