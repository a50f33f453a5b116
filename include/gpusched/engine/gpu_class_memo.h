// GpuClassMemo: what a plugin derives from the part of a node its GPU class fixes (devices, MIG
// slices, labels, allocatable amounts; Cycle::EnterNode), computed once per GPU class in a cycle
// instead of once per node: the live inventory's nodes differ by CPU and memory use far more often
// than by GPUs. Nodes the engine judges without a class are computed afresh every time, as are
// classes past the snapshot's GPU classes and kSpareClasses more (those of nodes a request brings,
// a pod's own node without its assumption), so what is kept is bounded by the snapshot.
// Not synchronized: a cycle serves one thread at a time.
#pragma once

#include <optional>
#include <vector>

#include "gpusched/engine/cycle.h"
#include "gpusched/model/node.h"

namespace gpusched {

template <class T>
class GpuClassMemo {
 public:
  static constexpr size_t kSpareClasses = 64;

  // The value for `node`: `compute(node, value)` fills a default-constructed T, once per GPU class
  // of the cycle. The reference is valid until the next call.
  template <class Compute>
  const T& Of(const Cycle& cycle, const NodeState& node, Compute&& compute) {
    uint32_t gpu_class = cycle.GpuClassOf(node);
    if (gpu_class == kNoGpuClass ||
        gpu_class >= cycle.snapshot().gpu_class_count() + kSpareClasses) {
      scratch_ = T();
      compute(node, scratch_);
      return scratch_;
    }
    if (gpu_class >= kept_.size()) kept_.resize(gpu_class + 1);
    std::optional<T>& kept = kept_[gpu_class];
    if (!kept) compute(node, kept.emplace());
    return *kept;
  }

 private:
  std::vector<std::optional<T>> kept_;  // by GPU class
  T scratch_;
};

}  // namespace gpusched
