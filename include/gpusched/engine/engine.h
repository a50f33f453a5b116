// Engine: runs one profile's enabled plugins over candidate nodes for one pod.
//
// Filter: a node passes when every plugin passes it; otherwise its verdict is the first
// unresolvable rejection, or failing that the first unschedulable one. A pod
// whose intent could not be parsed (a bad annotation, an unknown profile) is rejected everywhere
// as unresolvable with that reason.
// Prioritize: each plugin with a positive weight that applies to the pod scores every node (Score,
// then Normalize); the weighted mean of those scores (0..100) is mapped to the extender score
// 0..10 (MaxExtenderPriority) by the profile's ScoreMapping.
// A pod that asks for no GPU passes everywhere and scores 0 everywhere, unless the engine judges
// all pods (the packing simulator, where CPU-only pods also compete for nodes).
// Immutable after construction; safe for concurrent use from multiple threads.
#ifndef GPUSCHED_ENGINE_ENGINE_H_
#define GPUSCHED_ENGINE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/engine/cycle.h"
#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {

inline constexpr int64_t kMaxExtenderPriority = 10;
// What rejected a node when no plugin did: the pod's intent or profile choice was invalid.
inline constexpr std::string_view kPolicyRejection = "policy";

enum class ScoreMapping {
  kLinear,  // round(mean / 10)
  kMinMax,  // rescale so the best candidate gets 10 and the worst 0 (linear when all are equal)
};

struct WeightedPlugin {
  std::unique_ptr<Plugin> plugin;
  double weight = 0;  // 0: filter only
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

class Engine {
 public:
  Engine(GpuResourceNames gpu_names, std::vector<WeightedPlugin> plugins,
         PodIntent intent_defaults = {}, ScoreMapping mapping = ScoreMapping::kLinear,
         bool gpu_pods_only = true);

  // The cycle for `pod`; it borrows `pod` and `snapshot`, which must outlive it. A non-empty
  // `selection_error` (from choosing the profile) rejects the pod everywhere.
  std::unique_ptr<Cycle> NewCycle(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                  std::string_view selection_error = {}) const;

  // One verdict per node, in order. With `rejected_by`, also the name of the plugin that rejected
  // each node ("" when it passed; "policy" when the pod's intent or profile was invalid).
  std::vector<Verdict> Filter(const Cycle& cycle, std::span<const NodeState* const> nodes,
                              std::vector<std::string_view>* rejected_by = nullptr) const;
  // One score in [0, kMaxExtenderPriority] per node, in order.
  std::vector<int64_t> Prioritize(const Cycle& cycle,
                                  std::span<const NodeState* const> nodes) const;
  // For nodes that all passed Filter: whether each has the highest weighted score (every node when
  // the engine ignores the pod or nothing scores it).
  std::vector<bool> BestScored(const Cycle& cycle, std::span<const NodeState* const> nodes) const;
  // Filter, then score the nodes that pass, keeping every plugin's part.
  std::vector<NodeEvaluation> Evaluate(const Cycle& cycle,
                                       std::span<const NodeState* const> nodes) const;

  const GpuResourceNames& gpu_names() const { return gpu_names_; }
  const std::vector<WeightedPlugin>& plugins() const { return plugins_; }

 private:
  // The verdict for one node and the index of the plugin that rejected it (-1 when passed).
  std::pair<Verdict, int> FilterOne(const Cycle& cycle, const NodeState& node) const;
  // Per scoring plugin (index into plugins_), the normalized scores of `nodes`.
  std::vector<std::pair<size_t, std::vector<double>>> ScoreAll(
      const Cycle& cycle, std::span<const NodeState* const> nodes) const;
  // Weighted means (0..100) from ScoreAll's table.
  static std::vector<double> Combine(
      const std::vector<std::pair<size_t, std::vector<double>>>& table,
      const std::vector<WeightedPlugin>& plugins, size_t node_count);
  std::vector<int64_t> MapScores(const std::vector<double>& combined) const;
  // Whether the pod is outside this engine's concern: no GPU asked and GPU pods only.
  bool Ignores(const Cycle& cycle) const { return gpu_pods_only_ && cycle.gpu_demand().empty(); }

  GpuResourceNames gpu_names_;
  std::vector<WeightedPlugin> plugins_;
  PodIntent intent_defaults_;
  ScoreMapping mapping_;
  bool gpu_pods_only_;
};

}  // namespace gpusched

#endif  // GPUSCHED_ENGINE_ENGINE_H_
