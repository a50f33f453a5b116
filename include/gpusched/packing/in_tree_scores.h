// kube-scheduler's own (in-tree) resource filter and scores, as v1.26 computes them with the pod
// placed: NodeResourcesFit (its filter; LeastAllocated or MostAllocated) and
// NodeResourcesBalancedAllocation, and the integer arithmetic they share. The packing simulator's
// blend mode and `gpusched explain --blend` add them to the extender's score the way
// kube-scheduler does; the gpu-binpack plugin scores with the same MostAllocated formula. Pure
// functions; thread-safe. Here, below every user, so that explain/ and plugins/ need not reach
// into the simulator for kube-scheduler's arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

// kubelet's default --max-pods: the allocatable pods of a node whose description does not say
// (the openb node lists do not).
inline constexpr int64_t kDefaultMaxPods = 110;

// kube-scheduler's in-tree NodeResourcesFit scoring strategy.
enum class InTreeScore {
  kNone,
  kLeastAllocated,  // kube-scheduler's default: cpu and memory, weight 1 each
  kMostAllocated,   // GPU cluster guides' setting: nvidia.com/gpu 5, cpu 1, memory 1
};

// The blend mode a --blend flag names: "least-allocated" or "most-allocated"; nullopt otherwise.
std::optional<InTreeScore> ParseBlendMode(std::string_view text);

// kube-scheduler's NodeResourcesFit filter: one more pod within the node's allocatable pods, and
// every resource the pod requests (cpu, memory, nvidia.com/gpu, MIG slices...) within allocatable
// minus what the node's pods request.
bool InTreeFits(const NodeState& node, const PodInfo& pod);
// NodeResourcesFit's score (0..100) with the pod placed, in whole units as it computes; an
// extended resource the pod does not request is left out, as v1.26 does.
int64_t InTreeScoreOf(InTreeScore strategy, const NodeState& node, const PodInfo& pod);
// NodeResourcesBalancedAllocation's score (0..100) with the pod placed.
int64_t BalancedScoreOf(const NodeState& node, const PodInfo& pod);

// kube-scheduler's mostRequestedScore: requested * 100 / capacity, capped at 100 (its
// MaxNodeScore); 0 when capacity is 0. Inline: gpu-binpack calls it per resource on the request
// path.
inline int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  return std::min(requested, capacity) * 100 / capacity;
}

}  // namespace gpusched
