#include "gpusched/plugins/packing_scores.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
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
    idle = IdleOf(node, cycle.snapshot().device_model(), buffers);
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

// targetWorkload: {priorShare: 0..1, priorPods: 0..1e6,
//                  expected: [{gpus: N, weight: W} or {mig: PROFILE, weight: W}, ...]}
constexpr std::string_view kTargetWorkloadKeys[] = {"priorShare", "priorPods", "expected"};
constexpr std::string_view kShapeKeys[] = {"gpus", "mig", "weight"};
// Shapes a policy may list in targetWorkload.expected: each costs every scored node a check.
constexpr size_t kMaxExpectedShapes = 32;

// One expected shape: `gpus: N` whole GPUs, or `mig: PROFILE`, one slice of a MIG profile.
std::optional<TaskShape> ReadExpectedShape(SettingsSource& entry) {
  TaskShape shape;
  if (entry.Has("mig")) {
    auto profile = entry.String("mig");
    if (!profile) return std::nullopt;
    if (profile->size() > 32 || MigComputeSlices(*profile) <= 0 || !MigNominalMemoryMib(*profile)) {
      entry.Error("mig", "must be a MIG profile such as 1g.10gb");
      return std::nullopt;
    }
    shape.mig_profile = *profile;
    shape.mig_count = 1;
    return shape;
  }
  auto gpus = entry.Number("gpus", 1, static_cast<double>(kMaxGpusPerNode));
  if (!gpus) return std::nullopt;
  if (*gpus != static_cast<double>(static_cast<int64_t>(*gpus))) {
    entry.Error("gpus", "must be a whole number");
    return std::nullopt;
  }
  shape.gpu_milli = kMilliPerGpu;
  shape.num_gpu = static_cast<int32_t>(*gpus);
  return shape;
}

// The expected shapes with their weights made to sum to 1, in shape order; nullopt (reported)
// when none is valid or their weights are all 0.
std::optional<std::vector<WeightedShape>> ReadExpectedShapes(SettingsSource& workload) {
  auto entries =
      workload.List("expected", kShapeKeys, kMaxExpectedShapes,
                    "must be a non-empty list of at most " + std::to_string(kMaxExpectedShapes) +
                        " {gpus, weight} or {mig, weight}");
  if (!entries) return std::nullopt;
  std::map<TaskShape, double> weights;
  double total = 0;
  for (const auto& entry : *entries) {
    if (!entry) continue;
    if (!entry->Has("weight") || entry->Has("gpus") == entry->Has("mig")) {
      entry->Error({}, "needs weight and one of gpus or mig");
      continue;
    }
    auto weight = entry->Number("weight", 0, 1e6);
    std::optional<TaskShape> shape = ReadExpectedShape(*entry);
    if (!shape || !weight) continue;
    weights[*shape] += *weight;
    total += *weight;
  }
  if (total <= 0) {
    workload.Error("expected", "weights must not all be 0");
    return std::nullopt;
  }
  std::vector<WeightedShape> out;
  for (const auto& [shape, weight] : weights) {
    if (weight > 0) out.push_back({shape, weight / total});
  }
  return out;
}

// Its setting: what the target workload blends (packing/target_workload.h).
struct FgdArgs {
  TargetWorkloadSettings workload;

  void Read(SettingsSource& source) {
    if (!source.Has("targetWorkload")) return;
    std::unique_ptr<SettingsSource> in = source.Map("targetWorkload", kTargetWorkloadKeys);
    if (!in) return;
    if (in->Has("priorShare")) {
      if (auto v = in->Number("priorShare", 0, 1)) workload.prior_share = *v;
    }
    if (in->Has("priorPods")) {
      if (auto v = in->Number("priorPods", 0, 1e6)) workload.prior_pods = *v;
    }
    if (in->Has("expected")) {
      if (auto shapes = ReadExpectedShapes(*in)) workload.expected = std::move(*shapes);
    }
  }
  void Print(SettingsSink& sink) const {
    sink.BeginMap("targetWorkload");
    sink.Number("priorShare", workload.prior_share);
    sink.Number("priorPods", workload.prior_pods);
    if (!workload.expected.empty()) {
      sink.BeginList("expected");
      for (const auto& w : workload.expected) {
        sink.BeginMap({});
        if (w.shape.wants_mig()) {
          sink.String("mig", w.shape.mig_profile);
        } else {
          sink.Number("gpus", w.shape.num_gpu);
        }
        sink.Number("weight", w.weight);
        sink.End();
      }
      sink.End();
    }
    sink.End();
  }
};

}  // namespace

PluginEntry FgdPlugin::Entry() {
  return PluginEntry{.name = kName,
                     .extends = PointsOf<FgdPlugin>(),
                     .enabled = true,
                     .weight = 3,
                     .keys = {"targetWorkload"},
                     .default_config = [] { return std::make_unique<ArgsConfig<FgdArgs>>(); },
                     .top_level_key = "targetWorkload",
                     .top_level_as = "targetWorkload",
                     .make =
                         [](const PluginConfig* config, const PodIntent&) {
                           return std::make_unique<FgdPlugin>(ArgsOf<FgdArgs>(config).workload);
                         }};
}

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

double ConsolidatePlugin::ScoreName(const Cycle& cycle, std::string_view node_name,
                                    uint32_t number) const {
  // The snapshot keeps its names' hashes: thousands of names per call are not hashed again.
  uint64_t h =
      number != NodeIndex::kAbsent ? cycle.snapshot().NameHash(number) : Fnv1a::Of(node_name);
  double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // the top 53 bits, in [0, 1)
  return 100.0 * (1.0 - u);
}

}  // namespace gpusched
