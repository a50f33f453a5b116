// Packing scores for GPU-sharing workloads, from the FGD paper (Weng et al., USENIX ATC'23) and the
// baselines it compares against, with the formulas and integer truncation of its simulator so the
// packing benchmark reproduces the published figures:
//
//   fgd          int(100 * sigmoid((F_before - F_after) / 1000)): the placement that grows the
//                node's expected fragmentation F least (gpusched/packing/fragmentation.h) scores
//                highest; a share is tried on each device and the best counts.
//   best-fit     int(100 * (1 - r)), r = 0.5 * cpu left after / 128 cores + 0.5 * GPU left
//                after / 8 GPUs; then min-max normalized over the candidates.
//   dot-product  int(100 * (1 - d)), d = half the dot product of the node's free (CPU, GPU)
//                and the pod's request, each normalized as above: aligned shapes score low.
//   gpu-packing  prefer devices already shared, then partly used nodes, then empty ones.
//   consolidate  a fixed preference over nodes, 100 * (1 - u) with u in [0, 1) a hash of the node
//                name: every pod ranks the nodes the same way, so pods keep landing on the same
//                nodes and the others stay whole for large requests. FGD's integer scores tie
//                often; its published results rely on ties falling on the same nodes, which
//                kube-scheduler's per-pod random tie-break does not do (docs/benchmarks.md).
//
// They read devices through gpusched/packing/gpu_devices.h under the cycle's snapshot's device
// model, so on the live server (whole devices) they score whole-GPU packing; CPU terms are 0 on a
// node that declares no CPU (DeclaresCpu). They score every pod, CPU-only ones included, when the
// profile judges all pods.
#pragma once

#include "gpusched/engine/plugin.h"
#include "gpusched/packing/target_workload.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/plugins/task_shape.h"

namespace gpusched {

// A packing score named P::kName, with the pod's shape prepared once per cycle
// (plugins/task_shape.h).
template <class P>
class ShapeScorer : public NamedPlugin<P>, public PreparePlugin, public ScorePlugin {
 public:
  void Prepare(Cycle& cycle) const override { PrepareTaskShape(cycle); }
};

// Measures against the snapshot's target workload, or, when its targetWorkload setting differs
// from the defaults, against the blend it gives (prepared once per cycle).
class FgdPlugin : public ShapeScorer<FgdPlugin> {
 public:
  static constexpr std::string_view kName = "fgd";
  explicit FgdPlugin(TargetWorkloadSettings workload = {}) : workload_(std::move(workload)) {}
  // On by default with weight 3; setting `targetWorkload: {priorShare, priorPods, expected}`, also
  // stated as the policy's top-level `targetWorkload`.
  static PluginEntry Entry();
  void Prepare(Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;

 private:
  TargetWorkloadSettings workload_;
};

class BestFitPlugin : public ShapeScorer<BestFitPlugin> {
 public:
  static constexpr std::string_view kName = "best-fit";
  double Score(const Cycle& cycle, const NodeState& node) const override;
  // Integer min-max rescale to 0..100; all 0 when every candidate scores the same.
  void Normalize(const Cycle& cycle, std::span<double> scores) const override;
};

class DotProductPlugin : public ShapeScorer<DotProductPlugin> {
 public:
  static constexpr std::string_view kName = "dot-product";
  double Score(const Cycle& cycle, const NodeState& node) const override;
};

class GpuPackingPlugin : public ShapeScorer<GpuPackingPlugin> {
 public:
  static constexpr std::string_view kName = "gpu-packing";
  double Score(const Cycle& cycle, const NodeState& node) const override;
};

class ConsolidatePlugin : public NamedPlugin<ConsolidatePlugin>, public NameScorePlugin {
 public:
  static constexpr std::string_view kName = "consolidate";
  double ScoreName(const Cycle& cycle, std::string_view node_name, uint32_t number) const override;
};

}  // namespace gpusched
