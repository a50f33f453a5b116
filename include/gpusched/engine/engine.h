// Engine: runs the enabled plugins over candidate nodes for one pod.
//
// Filter: a node passes when every plugin passes it; the first rejection is its verdict.
// Prioritize: each plugin with a positive weight scores every node (Score, then Normalize), the
// weighted mean of those scores (0..100) becomes the extender score 0..10 (MaxExtenderPriority),
// rounded to nearest. A pod that asks for no GPU passes everywhere and scores 0 everywhere.
// Immutable after construction; safe for concurrent use from multiple threads.
#ifndef GPUSCHED_ENGINE_ENGINE_H_
#define GPUSCHED_ENGINE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpusched/engine/cycle.h"
#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {

inline constexpr int64_t kMaxExtenderPriority = 10;

struct WeightedPlugin {
  std::unique_ptr<Plugin> plugin;
  double weight = 0;  // 0: filter only
};

class Engine {
 public:
  Engine(GpuResourceNames gpu_names, std::vector<WeightedPlugin> plugins);

  // The cycle for `pod`; it borrows `pod` and `snapshot`, which must outlive it.
  std::unique_ptr<Cycle> NewCycle(const PodInfo& pod, const ClusterSnapshot& snapshot) const;

  // One verdict per node, in order.
  std::vector<Verdict> Filter(const Cycle& cycle, std::span<const NodeState* const> nodes) const;
  // One score in [0, kMaxExtenderPriority] per node, in order.
  std::vector<int64_t> Prioritize(const Cycle& cycle,
                                  std::span<const NodeState* const> nodes) const;

  const GpuResourceNames& gpu_names() const { return gpu_names_; }

 private:
  GpuResourceNames gpu_names_;
  std::vector<WeightedPlugin> plugins_;
};

}  // namespace gpusched

#endif  // GPUSCHED_ENGINE_ENGINE_H_
