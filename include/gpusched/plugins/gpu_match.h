// gpu-match: GPU product, family, memory per GPU, compute capability, CUDA driver and CUDA runtime.
//
// Filter: every hard requirement of the pod's intent (policy profile plus gpusched.io/ annotations)
// must hold, else the node is unresolvable with a reason naming the requirement, not the node.
// A node whose label for a required criterion is missing cannot prove it and fails too. Products
// match as case-insensitive globs; old driver names without the "NVIDIA-" prefix and the "-SHARED"
// suffix of shared resources are matched as well. Versions compare numerically.
// The pod's required node pins (nodeSelector and required node affinity on the nvidia.com/ labels,
// gpusched/model/node_pins.h) filter too: kube-scheduler applies them itself, but judged here
// `gpusched explain` and static inventories say why a node is out.
// Score (pods with preferences, preferCheapest or preferred node affinity): the share of
// preferences the node meets, its cheapness, cost(cheapest product in the table) / cost(node's
// product), and the share of the preferred node-affinity weight it earns, averaged.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpusched/engine/plugin.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/plugins/pod_intent.h"

namespace gpusched {

using CostTable = std::vector<std::pair<std::string, double>>;  // product glob -> cost

class GpuMatchPlugin : public NamedPlugin<GpuMatchPlugin>,
                       public PreparePlugin,
                       public FilterPlugin,
                       public ScorePlugin {
 public:
  static constexpr std::string_view kName = "gpu-match";
  // `profile_intent`: the requirements and preferences of the profile's pods, before annotations.
  GpuMatchPlugin(CostTable costs, PodIntent profile_intent)
      : costs_(std::move(costs)), profile_intent_(std::move(profile_intent)) {}
  // On by default with weight 1; setting `costs` (product glob -> relative cost, first match
  // counts), also stated as the policy's top-level `costs`.
  static PluginEntry Entry();
  void Prepare(Cycle& cycle) const override { PreparePodIntent(cycle, profile_intent_); }
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  // It judges labels and GPU facts, never what pods use of cpu, memory or pods.
  bool FilterIgnoresNativeResources(const Cycle&) const override { return true; }
  bool ScoresPod(const Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  CostTable costs_;
  PodIntent profile_intent_;
};

// Whether `product` (a gpu.product label) matches `glob`, accepting old and shared spellings.
bool ProductMatches(std::string_view glob, std::string_view product);

}  // namespace gpusched
