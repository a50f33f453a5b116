#include "gpusched/packing/gpu_devices.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {

namespace {

// DeviceFreeMilli for a node whose nvidia.com/gpu unit is `unit`.
void DeviceFreeMilliOf(const NodeState& node, DeviceModel devices, GpuUnit unit,
                       std::vector<int64_t>& out) {
  if (std::span<const int32_t> shares = devices.SharesOf(node); !shares.empty()) {
    out.assign(shares.begin(), shares.end());
    return;
  }
  if (unit.kind == GpuUnitKind::kMigSlice) {  // IdleOf counts them as MIG slices
    out.clear();
    return;
  }
  int64_t allocatable = node.info.allocatable.milli(kGpuResource);
  int64_t units = std::min(allocatable / kMilliPerGpu, kMaxGpusPerNode);
  int64_t free =
      std::clamp<int64_t>((allocatable - node.used.milli(kGpuResource)) / kMilliPerGpu, 0, units);
  // Replicas make devices of per_gpu units each. Which device a replica lands on is the device
  // plugin's choice, unseen here: the free ones are counted as the most whole devices they make.
  out.assign(static_cast<size_t>((units + unit.per_gpu - 1) / unit.per_gpu), 0);
  for (size_t i = 0; i < out.size() && free > 0; ++i) {
    int64_t here = std::min(free, unit.per_gpu);
    out[i] = here * kMilliPerGpu / unit.per_gpu;
    free -= here;
  }
}

}  // namespace

void DeviceFreeMilli(const NodeState& node, DeviceModel devices, std::vector<int64_t>& out) {
  DeviceFreeMilliOf(node, devices, GpuUnitOf(node.info, kGpuResource), out);
}

bool DeclaresCpu(const NodeState& node) { return node.info.allocatable.contains("cpu"); }

int64_t IdleCpuMilli(const NodeState& node) {
  std::optional<int64_t> allocatable = node.info.allocatable.find("cpu");
  return allocatable ? *allocatable - node.used.milli("cpu") : std::numeric_limits<int64_t>::max();
}

int64_t CpuAfter(int64_t cpu_milli, const TaskShape& pod) {
  return cpu_milli == std::numeric_limits<int64_t>::max() ? cpu_milli : cpu_milli - pod.cpu_milli;
}

NodeIdle IdleOf(const NodeState& node, DeviceModel devices, IdleBuffers& buffers) {
  // Shares per device (the simulator) need no unit: they are the devices.
  const bool shares = KeepsDeviceShares(node, devices);
  const GpuUnit unit = shares ? GpuUnit{} : GpuUnitOf(node.info, kGpuResource);
  DeviceFreeMilliOf(node, devices, unit, buffers.devices);
  buffers.mig.clear();
  // The names are sorted: the MIG slices are one range of them.
  const ResourceList& allocatable = node.info.allocatable;
  auto first = std::lower_bound(
      allocatable.begin(), allocatable.end(), kMigResourcePrefix,
      [](const ResourceAmount& r, std::string_view prefix) { return r.name < prefix; });
  for (auto it = first; it != allocatable.end() && it->name.starts_with(kMigResourcePrefix) &&
                        buffers.mig.size() < kMaxMigProfilesPerNode;
       ++it) {
    const ResourceAmount& r = *it;
    if (!IsMigSliceResource(r.name)) continue;
    std::string_view profile = MigProfileOf(r.name);
    int64_t free =
        std::clamp<int64_t>(r.milli / 1000 - node.used.units(r.name), 0, kMaxGpusPerNode);
    buffers.mig.push_back({profile, free, MigComputeSlices(profile)});
  }
  if (unit.kind == GpuUnitKind::kMigSlice && buffers.mig.size() < kMaxMigProfilesPerNode) {
    std::string_view profile = node.info.gpu.single_mig_profile();
    int64_t units = std::clamp<int64_t>(allocatable.units(kGpuResource), 0, kMaxGpusPerNode);
    int64_t free = std::clamp<int64_t>(units - node.used.units(kGpuResource), 0, units);
    buffers.mig.push_back({profile, free, MigComputeSlices(profile)});
  }
  return NodeIdle{.cpu_milli = IdleCpuMilli(node),
                  .gpu_free_milli = buffers.devices,
                  .model = node.info.gpu.product,
                  .mig_free = buffers.mig};
}

TaskShape ShapeOf(const ResourceList& requests, std::vector<std::string> models) {
  TaskShape shape;
  shape.cpu_milli = requests.milli("cpu");
  int64_t gpu = requests.milli(kGpuResource);
  if (gpu >= kMilliPerGpu) {
    shape.num_gpu = static_cast<int32_t>(
        std::min(gpu / kMilliPerGpu + (gpu % kMilliPerGpu != 0 ? 1 : 0), kMaxGpusPerNode));
    shape.gpu_milli = kMilliPerGpu;
  } else if (gpu > 0) {
    shape.num_gpu = 1;
    shape.gpu_milli = gpu;
  }
  for (const auto& r : requests) {
    if (!IsMigSliceResource(r.name) || r.milli < 1000) continue;
    shape.mig_profile = std::string(MigProfileOf(r.name));
    shape.mig_count = static_cast<int32_t>(std::min(r.milli / 1000, kMaxGpusPerNode));
    break;
  }
  shape.gpu_models = std::move(models);
  return shape;
}

TaskShape ShapeOf(const PodInfo& pod, std::vector<std::string> models) {
  return ShapeOf(pod.requests, std::move(models));
}

namespace {

// Calls `take(index)` for each device BestFitDevices picks, in its order.
template <class Take>
void ForBestFit(std::span<const int64_t> free, const TaskShape& shape, Take take) {
  if (!shape.wants_gpu()) return;
  if (shape.gpu_milli >= kMilliPerGpu) {
    int32_t whole = 0;
    for (size_t i = 0; i < free.size() && whole < shape.num_gpu; ++i) {
      if (free[i] >= kMilliPerGpu) ++whole;
    }
    if (whole < shape.num_gpu) return;
    int32_t taken = 0;
    for (size_t i = 0; i < free.size() && taken < shape.num_gpu; ++i) {
      if (free[i] < kMilliPerGpu) continue;
      take(static_cast<int>(i));
      ++taken;
    }
    return;
  }
  int best = -1;
  for (size_t i = 0; i < free.size(); ++i) {
    if (free[i] >= shape.gpu_milli && (best < 0 || free[i] < free[best]))
      best = static_cast<int>(i);
  }
  if (best >= 0) take(best);
}

}  // namespace

std::vector<int> BestFitDevices(std::span<const int64_t> free, const TaskShape& shape) {
  std::vector<int> taken;
  ForBestFit(free, shape, [&](int device) { taken.push_back(device); });
  return taken;
}

namespace {

int64_t SigmoidScore(double before, double after) {
  double x = (before - after) / static_cast<double>(kMilliPerGpu);
  return static_cast<int64_t>(100.0 / (1.0 + std::exp(-x)));
}

// Writes `value`'s bytes at `out`; returns the end.
template <class T>
char* PutBytes(char* out, T value) {
  std::memcpy(out, &value, sizeof value);
  return out + sizeof value;
}

char* PutText(char* out, std::string_view text) {
  out = PutBytes(out, text.size());
  std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

// The runs of equal values in `values`, as (value, length) pairs: a live node's devices are two.
template <class F>
void ForRuns(std::span<const int64_t> values, F f) {
  for (size_t i = 0; i < values.size();) {
    size_t j = i + 1;
    while (j < values.size() && values[j] == values[i]) ++j;
    f(values[i], j - i);
    i = j;
  }
}

}  // namespace

NodeIdle PlacedOn(const NodeIdle& node, const TaskShape& pod, IdleBuffers& buffers) {
  buffers.devices.assign(node.gpu_free_milli.begin(), node.gpu_free_milli.end());
  ForBestFit(node.gpu_free_milli, pod,
             [&](int device) { buffers.devices[static_cast<size_t>(device)] -= pod.gpu_milli; });
  NodeIdle placed = node;
  placed.cpu_milli = CpuAfter(node.cpu_milli, pod);
  placed.gpu_free_milli = buffers.devices;
  if (pod.wants_mig()) {
    buffers.mig.assign(node.mig_free.begin(), node.mig_free.end());
    for (auto& s : buffers.mig) {
      if (s.profile == pod.mig_profile) s.count = std::max<int64_t>(0, s.count - pod.mig_count);
    }
    placed.mig_free = buffers.mig;
  }
  return placed;
}

FgdChoice FgdScore(const NodeIdle& node, const TaskShape& pod,
                   std::span<const WeightedShape> workload) {
  IdleBuffers buffers;
  return FgdScore(node, pod, workload, buffers);
}

FgdChoice FgdScore(const NodeIdle& node, const TaskShape& pod,
                   std::span<const WeightedShape> workload, IdleBuffers& buffers) {
  double before = NodeFragmentMilli(node, workload);
  NodeIdle placed = PlacedOn(node, pod, buffers);
  FgdChoice choice;
  if (pod.wants_gpu() && pod.gpu_milli < kMilliPerGpu) {
    // A share: every device that fits is tried, not only the best-fitting one.
    std::vector<int64_t>& after = buffers.devices;
    std::copy(node.gpu_free_milli.begin(), node.gpu_free_milli.end(), after.begin());
    for (size_t i = 0; i < after.size(); ++i) {
      if (after[i] < pod.gpu_milli) continue;
      after[i] -= pod.gpu_milli;
      int64_t score = SigmoidScore(before, NodeFragmentMilli(placed, workload));
      after[i] += pod.gpu_milli;
      if (choice.device < 0 || score > choice.score) choice = {score, static_cast<int>(i)};
    }
    return choice;
  }
  choice.score = SigmoidScore(before, NodeFragmentMilli(placed, workload));
  return choice;
}

FgdScores::FgdScores(TaskShape pod, std::vector<WeightedShape> workload)
    : pod_(std::move(pod)), workload_(std::move(workload)) {
  for (const auto& w : workload_) cpu_asks_.push_back(w.shape.cpu_milli);
  std::sort(cpu_asks_.begin(), cpu_asks_.end());
  cpu_asks_.erase(std::unique(cpu_asks_.begin(), cpu_asks_.end()), cpu_asks_.end());
}

uint32_t FgdScores::AsksReached(int64_t cpu_milli) const {
  return static_cast<uint32_t>(std::upper_bound(cpu_asks_.begin(), cpu_asks_.end(), cpu_milli) -
                               cpu_asks_.begin());
}

void FgdScores::WriteKey(const NodeIdle& node) {
  // Every field FgdScore reads, each length-prefixed or of fixed size so different nodes never
  // write the same key; the free CPU as the asks it reaches (shapes compare it with `>=` only);
  // the devices as runs of equal free milli-GPU.
  size_t size = 2 * sizeof(uint32_t) + 2 * sizeof(size_t) + node.model.size();
  ForRuns(node.gpu_free_milli, [&](int64_t, size_t) { size += sizeof(int64_t) + sizeof(size_t); });
  for (const IdleSlices& s : node.mig_free) {
    size += sizeof(size_t) + s.profile.size() + 2 * sizeof(int64_t);
  }
  key_.resize(size);
  char* out = key_.data();
  out = PutBytes(out, AsksReached(node.cpu_milli));
  out = PutBytes(out, AsksReached(CpuAfter(node.cpu_milli, pod_)));
  out = PutText(out, node.model);
  out = PutBytes(out, node.gpu_free_milli.size());
  ForRuns(node.gpu_free_milli, [&](int64_t free, size_t length) {
    out = PutBytes(out, free);
    out = PutBytes(out, length);
  });
  for (const IdleSlices& s : node.mig_free) {
    out = PutText(out, s.profile);
    out = PutBytes(out, s.count);
    out = PutBytes(out, s.compute_slices);
  }
}

int64_t FgdScores::Of(const NodeIdle& node, std::optional<uint32_t> gpu_class) {
  if (gpu_class && cpu_asks_.size() < UINT16_MAX) {
    uint64_t key = uint64_t{*gpu_class} << 32 | uint64_t{AsksReached(node.cpu_milli)} << 16 |
                   AsksReached(CpuAfter(node.cpu_milli, pod_));
    if (auto it = scores_by_class_.find(key); it != scores_by_class_.end()) return it->second;
    int64_t score = FgdScore(node, pod_, workload_, placed_).score;
    scores_by_class_.emplace(key, score);
    return score;
  }
  if (node.gpu_free_milli.size() > kMaxRememberedDevices) {
    return FgdScore(node, pod_, workload_, placed_).score;
  }
  WriteKey(node);
  if (auto it = scores_.find(std::string_view(key_)); it != scores_.end()) return it->second;
  int64_t score = FgdScore(node, pod_, workload_, placed_).score;
  scores_.emplace(key_, score);
  return score;
}

}  // namespace gpusched
