// mig-fit: places MIG slices.
//
// Filter: a pod asking for nvidia.com/mig-<profile> that no node in the cluster offers (as a
// mixed-strategy resource, or as the product of single-strategy GPUs) is rejected everywhere as
// unresolvable, with a reason naming the profile and the profiles that exist.
// (Per-node counts are gpu-fit's job.)
// Score (pods asking for mig-* resources, or for nvidia.com/gpu with a required product that is a
// MIG product): best fit. After the placement, the free MIG capacity left on the node is counted in
// compute slices, with free slices of profiles larger than the requested one counted twice; the
// node that strands the least (relative to its MIG capacity) scores highest. Small profiles thus
// consolidate onto GPUs already cut small and busy, and nodes with large free profiles are kept for
// large requests.
#pragma once

#include "gpusched/engine/plugin.h"
#include "gpusched/plugins/pod_intent.h"

namespace gpusched {

class MigFitPlugin : public NamedPlugin<MigFitPlugin>,
                     public PreparePlugin,
                     public FilterPlugin,
                     public ScorePlugin {
 public:
  static constexpr std::string_view kName = "mig-fit";
  // `profile_intent`: the profile's required products (a MIG product makes nvidia.com/gpu a slice).
  explicit MigFitPlugin(PodIntent profile_intent = {})
      : profile_intent_(std::move(profile_intent)) {}
  // The pod's intent; for a pod asking for MIG slices, also the profiles the cluster offers.
  void Prepare(Cycle& cycle) const override;
  Verdict Filter(const Cycle& cycle, const NodeState& node) const override;
  bool FilterIgnoresNativeResources(const Cycle&) const override { return true; }
  bool ScoresPod(const Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  PodIntent profile_intent_;
};

}  // namespace gpusched
