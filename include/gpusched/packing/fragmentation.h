// GPU fragmentation as defined by FGD (Weng et al., "Beware of Fragmentation", USENIX ATC'23):
// idle GPU capacity that the tasks a cluster typically runs could not use.
//
// The target workload is the set of task shapes (CPU, GPU count, milli-GPU per GPU, allowed GPU
// models, or MIG slices of one profile) that covers `coverage` of the tasks, each weighted by its
// frequency. A node's idle GPU is its devices' free milli-GPU plus its free MIG slices (a slice
// counted by its compute slices out of 7); devices serve device tasks (whole GPUs, shares, and
// CPU-only tasks count here), slices serve MIG tasks. For one node and one device shape: when it
// fits, the idle milli-GPU on devices with less free than its share counts as fragment; when it
// does not fit (too little CPU or GPU), asks for no GPU, or cannot use the node's GPU model, all
// the devices' idle milli-GPU counts. For a MIG shape: when it fits, the free slices of other
// profiles; when not, all free slices. A node's fragment is the weight-summed fragment over the
// shapes; in a live target workload each kind's weights sum to 1 (LiveTargetWorkload), so how
// many MIG pods run does not change what a device fragment costs. The packing
// simulator, its FGD policy and the live fragmentation gauge all use these functions. Pure
// functions; thread-safe.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {

// Fields in FGD's key order (CPU, share, count, models): the target workload breaks frequency ties
// by this order, as FGD's simulator does.
struct TaskShape {
  int64_t cpu_milli = 0;
  int64_t gpu_milli = 0;  // per GPU: 1000 for whole GPUs; below 1000 only when num_gpu == 1
  int32_t num_gpu = 0;
  std::vector<std::string> gpu_models;  // allowed GPU models; empty: any
  std::string mig_profile{};            // a MIG task: `mig_count` slices of this profile
  int32_t mig_count = 0;
  auto operator<=>(const TaskShape&) const = default;
  bool operator==(const TaskShape&) const = default;

  bool wants_gpu() const { return num_gpu > 0 && gpu_milli > 0; }
  bool wants_mig() const { return mig_count > 0 && !mig_profile.empty(); }
  // Inline: measuring a node asks it of every shape.
  bool AcceptsModel(std::string_view model) const {
    return gpu_models.empty() || ListsModel(model);
  }

 private:
  bool ListsModel(std::string_view model) const;
};

struct WeightedShape {
  TaskShape shape;
  double weight = 0;  // frequency in the target workload, among the shapes of its kind
};

// Free MIG slices of one profile on a node.
struct IdleSlices {
  std::string_view profile;  // "1g.10gb"
  int64_t count = 0;
  int64_t compute_slices = 0;  // of one slice, out of a GPU's kMigComputeSlicesPerGpu

  // The free slices in milli-GPU.
  int64_t milli() const { return MigSliceMilli(count, compute_slices); }
};

// What is idle on one node.
struct NodeIdle {
  int64_t cpu_milli = 0;
  std::span<const int64_t> gpu_free_milli;  // per GPU, 0..1000
  std::string_view model;
  std::span<const IdleSlices> mig_free{};  // one entry per profile the node offers
};

// Idle milli-GPU of `node`: free device milli-GPU, plus free MIG slices.
int64_t DeviceIdleMilli(const NodeIdle& node);
int64_t IdleMilli(const NodeIdle& node);

// Whether a task of `shape` fits on the idle resources (CPU, GPU count and share, MIG slices,
// model). A whole-GPU task needs `num_gpu` fully free GPUs; a sharing task one GPU with enough
// free; a MIG task `mig_count` free slices of its profile.
bool ShapeFits(const NodeIdle& node, const TaskShape& shape);

// Idle milli-GPU of `node`, of the kind `shape` uses (devices or MIG slices), that a task of
// `shape` could not use.
int64_t ShapeFragmentMilli(const NodeIdle& node, const TaskShape& shape);

// The weighted fragment of `node` under `workload`, in milli-GPU.
double NodeFragmentMilli(const NodeIdle& node, std::span<const WeightedShape> workload);

// The shapes of `workload` of one kind (MIG shapes, or device shapes), reweighted to sum to 1
// unless they do. Where a placement cannot change the other kind's fragment (no CPU is tracked,
// so a pod takes only capacity of its own kind), NodeFragmentMilli's change under the shapes of
// the pod's kind of a live target workload equals its change under the whole, for less work.
std::vector<WeightedShape> ShapesOfKind(std::span<const WeightedShape> workload, bool mig);

// FGD's cut: the target workload is the most frequent shapes that cover this share of the tasks.
inline constexpr double kWorkloadCoverage = 0.95;

// The most frequent shapes of `tasks` (ties: the larger shape first) until they cover `coverage`
// of the tasks, weighted by frequency among the kept shapes.
std::vector<WeightedShape> TargetWorkload(std::span<const TaskShape> tasks, double coverage = 0.95);
// The same from shape counts.
std::vector<WeightedShape> TargetWorkload(const std::map<TaskShape, int64_t>& counts,
                                          double coverage = 0.95);
// The same from weighted shapes (any order, weights >= 0): the heaviest first (ties: the larger
// shape first) until they cover `coverage` of the total weight, reweighted to sum to 1.
std::vector<WeightedShape> CommonShapes(std::span<const WeightedShape> shapes,
                                        double coverage = kWorkloadCoverage);

}  // namespace gpusched
