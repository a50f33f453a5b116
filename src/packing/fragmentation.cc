#include "gpusched/packing/fragmentation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace gpusched {

bool TaskShape::ListsModel(std::string_view model) const {
  return std::find(gpu_models.begin(), gpu_models.end(), model) != gpu_models.end();
}

namespace {

int64_t MigIdleMilli(const NodeIdle& node) {
  int64_t milli = 0;
  for (const auto& s : node.mig_free) milli += s.milli();
  return milli;
}

// The free slices of `profile` on `node`, or nullptr when it offers none.
const IdleSlices* SlicesOf(const NodeIdle& node, std::string_view profile) {
  for (const auto& s : node.mig_free) {
    if (s.profile == profile) return &s;
  }
  return nullptr;
}

}  // namespace

int64_t DeviceIdleMilli(const NodeIdle& node) {
  return std::accumulate(node.gpu_free_milli.begin(), node.gpu_free_milli.end(), int64_t{0});
}

int64_t IdleMilli(const NodeIdle& node) { return DeviceIdleMilli(node) + MigIdleMilli(node); }

bool ShapeFits(const NodeIdle& node, const TaskShape& shape) {
  if (node.cpu_milli < shape.cpu_milli) return false;
  if (!shape.wants_gpu() && !shape.wants_mig()) return true;
  if (!shape.AcceptsModel(node.model)) return false;
  if (shape.wants_mig()) {
    const IdleSlices* slices = SlicesOf(node, shape.mig_profile);
    if (slices == nullptr || slices->count < shape.mig_count) return false;
  }
  if (!shape.wants_gpu()) return true;
  int64_t enough = std::count_if(node.gpu_free_milli.begin(), node.gpu_free_milli.end(),
                                 [&](int64_t free) { return free >= shape.gpu_milli; });
  return enough >= shape.num_gpu;
}

int64_t ShapeFragmentMilli(const NodeIdle& node, const TaskShape& shape) {
  if (shape.wants_mig()) {
    int64_t idle = MigIdleMilli(node);
    if (!ShapeFits(node, shape)) return idle;
    const IdleSlices& usable = *SlicesOf(node, shape.mig_profile);
    return idle - usable.milli();
  }
  int64_t idle = DeviceIdleMilli(node);
  if (!shape.wants_gpu() || !ShapeFits(node, shape)) return idle;
  int64_t fragment = 0;
  for (int64_t free : node.gpu_free_milli) {
    if (free < shape.gpu_milli) fragment += free;
  }
  return fragment;
}

namespace {

// What the common shapes (whole GPUs, or slices of one profile) read of one node, counted once
// per node rather than once per shape: the idle milli-GPU of devices and of MIG slices, the fully
// free devices, and the idle milli-GPU on the other devices.
struct IdleFacts {
  explicit IdleFacts(const NodeIdle& node) : mig_idle(MigIdleMilli(node)) {
    for (int64_t free : node.gpu_free_milli) {
      device_idle += free;
      if (free >= kMilliPerGpu) {
        ++whole;
      } else {
        partial += free;
      }
    }
  }
  int64_t device_idle = 0;
  int64_t mig_idle = 0;
  int64_t whole = 0;
  int64_t partial = 0;
};

// ShapeFragmentMilli from the node's facts.
int64_t FragmentMilli(const NodeIdle& node, const IdleFacts& facts, const TaskShape& shape) {
  bool mig = shape.wants_mig();
  if (!mig && !shape.wants_gpu()) return facts.device_idle;
  // A share, or slices with devices too: rare enough to count in full.
  if (shape.wants_gpu() && (mig || shape.gpu_milli != kMilliPerGpu)) {
    return ShapeFragmentMilli(node, shape);
  }
  int64_t idle = mig ? facts.mig_idle : facts.device_idle;
  if (node.cpu_milli < shape.cpu_milli || !shape.AcceptsModel(node.model)) return idle;
  if (!mig) return facts.whole >= shape.num_gpu ? facts.partial : idle;
  const IdleSlices* slices = node.mig_free.empty() ? nullptr : SlicesOf(node, shape.mig_profile);
  return slices != nullptr && slices->count >= shape.mig_count ? idle - slices->milli() : idle;
}

}  // namespace

double NodeFragmentMilli(const NodeIdle& node, std::span<const WeightedShape> workload) {
  const IdleFacts facts(node);
  double sum = 0;
  for (const auto& w : workload) {
    sum += w.weight * static_cast<double>(FragmentMilli(node, facts, w.shape));
  }
  return sum;
}

std::vector<WeightedShape> ShapesOfKind(std::span<const WeightedShape> workload, bool mig) {
  std::vector<WeightedShape> kind;
  double weight = 0;
  for (const auto& w : workload) {
    if (w.shape.wants_mig() != mig) continue;
    kind.push_back(w);
    weight += w.weight;
  }
  // Weights that already sum to 1 stay as they are, to the last bit.
  if (weight > 0 && std::abs(weight - 1) > 1e-9) {
    for (auto& w : kind) w.weight /= weight;
  }
  return kind;
}

std::vector<WeightedShape> TargetWorkload(std::span<const TaskShape> tasks, double coverage) {
  std::map<TaskShape, int64_t> counts;
  for (const auto& t : tasks) ++counts[t];
  return TargetWorkload(counts, coverage);
}

std::vector<WeightedShape> TargetWorkload(const std::map<TaskShape, int64_t>& counts,
                                          double coverage) {
  int64_t total = 0;
  for (const auto& [shape, n] : counts) total += n;
  std::vector<WeightedShape> shares;
  shares.reserve(counts.size());
  for (const auto& [shape, n] : counts) {
    shares.push_back({shape, static_cast<double>(n) / static_cast<double>(total)});
  }
  return CommonShapes(shares, coverage);
}

std::vector<WeightedShape> CommonShapes(std::span<const WeightedShape> shapes, double coverage) {
  std::vector<WeightedShape> sorted(shapes.begin(), shapes.end());
  std::sort(sorted.begin(), sorted.end(), [](const WeightedShape& a, const WeightedShape& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    return b.shape < a.shape;
  });
  double total = 0;
  for (const auto& w : sorted) total += w.weight;
  const double needed = coverage * total;
  std::vector<WeightedShape> kept;
  double covered = 0;
  for (auto& w : sorted) {
    if (!kept.empty() && covered >= needed) break;
    covered += w.weight;
    kept.push_back(std::move(w));
  }
  if (covered <= 0) return {};
  for (auto& w : kept) w.weight /= covered;
  return kept;
}

}  // namespace gpusched
