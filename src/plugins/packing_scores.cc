#include "gpusched/plugins/packing_scores.h"

#include <algorithm>
#include <numeric>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/plugins/idle_view.h"
#include "gpusched/plugins/task_shape.h"
#include "gpusched/util/fnv1a.h"

namespace gpusched {
namespace {

// What a score formula needs of one node and the cycle's pod.
struct Fit {
  Fit(const Fit&) = delete;  // `idle` points into `buffers`
  Fit& operator=(const Fit&) = delete;
  IdleBuffers& buffers;
  NodeIdle idle;
  const TaskShape& pod;
  double cpu_left = 0;  // 0 when the node declares no CPU
  double gpu_left = 0;  // sum over devices, milli-GPU
  double pod_gpu = 0;   // the pod's whole GPU request, milli-GPU

  Fit(const Cycle& cycle, const NodeState& node, IdleBuffers& storage)
      : buffers(storage), pod(TaskShapeOf(cycle)) {
    idle = IdleOf(node, buffers);
    cpu_left = DeclaresCpu(node) ? static_cast<double>(idle.cpu_milli) : 0;
    gpu_left = static_cast<double>(DeviceIdleMilli(idle));
    pod_gpu = static_cast<double>(pod.num_gpu * pod.gpu_milli);
  }
  double pod_cpu(const NodeState& node) const {
    return DeclaresCpu(node) ? static_cast<double>(pod.cpu_milli) : 0;
  }
};

// The pod's scores against the target workload under the policy's targetWorkload settings, blended
// once per cycle. Mutable: scores are remembered as nodes are judged, and a cycle serves one thread
// at a time.
struct FgdCycle : CycleData {
  FgdCycle(const TaskShape& pod, std::vector<WeightedShape> target)
      : scores(pod, std::move(target)) {}
  mutable FgdScores scores;
};

}  // namespace

void ShapeScorer::Prepare(Cycle& cycle) const { PrepareTaskShape(cycle); }

void FgdPlugin::Prepare(Cycle& cycle) const {
  PrepareTaskShape(cycle);
  PrepareIdleView(cycle);
  const ClusterSnapshot& snapshot = cycle.snapshot();
  std::vector<WeightedShape> target =
      LiveTargetWorkload(snapshot.observed(), snapshot.standard_workload(), workload_);
  // Devices and MIG slices are measured apart, and while no node declares CPU a pod changes only
  // the fragment of the kind it takes: the other kind's shapes would cost every node for nothing.
  if (!snapshot.Offers("cpu")) target = ShapesOfKind(target, TaskShapeOf(cycle).wants_mig());
  cycle.Put(kName, std::make_unique<FgdCycle>(TaskShapeOf(cycle), std::move(target)));
}

double FgdPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  const FgdCycle* prepared = cycle.Get<FgdCycle>(kName);
  // Never prepared: no workload to measure against, so no placement changes the fragment.
  if (prepared == nullptr) return kMaxNodeScore / 2;
  uint32_t gpu_class = cycle.GpuClassOf(node);
  return static_cast<double>(prepared->scores.Of(  // the view was prepared with the scores
      *IdleViewOf(cycle, node),
      gpu_class == kNoGpuClass ? std::nullopt : std::optional<uint32_t>(gpu_class)));
}

double BestFitPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  IdleBuffers buffers;
  Fit f(cycle, node, buffers);
  double r = 0.5 * (f.cpu_left - f.pod_cpu(node)) / kMaxSpecCpuMilli +
             0.5 * (f.gpu_left - f.pod_gpu) / kMaxSpecGpuMilli;
  return static_cast<double>(static_cast<int64_t>((1 - r) * 100));
}

void BestFitPlugin::Normalize(const Cycle&, std::span<double> scores) const {
  if (scores.empty()) return;
  auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  int64_t low = static_cast<int64_t>(*lo);
  int64_t range = static_cast<int64_t>(*hi) - low;
  for (double& s : scores) {
    s = range == 0 ? 0 : static_cast<double>((static_cast<int64_t>(s) - low) * 100 / range);
  }
}

double DotProductPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  IdleBuffers buffers;
  Fit f(cycle, node, buffers);
  double d = (f.cpu_left / kMaxSpecCpuMilli * f.pod_cpu(node) / kMaxSpecCpuMilli +
              f.gpu_left / kMaxSpecGpuMilli * f.pod_gpu / kMaxSpecGpuMilli) /
             2;
  return static_cast<double>(static_cast<int64_t>(100 * (1 - d)));
}

double GpuPackingPlugin::Score(const Cycle& cycle, const NodeState& node) const {
  IdleBuffers buffers;
  Fit f(cycle, node, buffers);
  if (!f.pod.wants_gpu()) return 0;
  const auto& free = f.buffers.devices;
  int64_t fully_free = std::count(free.begin(), free.end(), kMilliPerGpu);
  if (fully_free == static_cast<int64_t>(free.size())) {
    return static_cast<double>(std::max<int64_t>(33 - fully_free, fully_free));  // untouched node
  }
  // The devices the pod would take, least free first; whole free devices taken cost the most.
  std::vector<size_t> order(free.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return free[a] < free[b]; });
  int64_t taken = 0;
  int64_t whole = 0;
  int64_t left_percent = 0;
  for (size_t i : order) {
    if (taken == f.pod.num_gpu) break;
    if (free[i] < f.pod.gpu_milli) continue;
    ++taken;
    if (free[i] == kMilliPerGpu) ++whole;
    left_percent += free[i] * 100 / kMilliPerGpu;
  }
  if (whole > 0) return static_cast<double>(std::max<int64_t>(50 - whole, 33));
  return static_cast<double>(std::max<int64_t>(100 - left_percent / 10, 50));
}

double ConsolidatePlugin::ScoreName(const Cycle&, std::string_view node_name) const {
  uint64_t h = Fnv1a::Of(node_name);
  double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // the top 53 bits, in [0, 1)
  return 100.0 * (1.0 - u);
}

}  // namespace gpusched
