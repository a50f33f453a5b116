// The per-GPU view of a node and a pod that packing decisions need (FGD, best fit, GPU packing).
//
// A node's devices depend on the device model of the snapshot it is judged in
// (gpusched/model/device_model.h, ClusterSnapshot::device_model()), which the caller passes: under
// whole devices (the live server) they are the physical GPUs behind its nvidia.com/gpu units
// (GpuUnitOf: one per unit, or one per R time-sliced or MPS replicas with free replicas as shares
// of it, or none where the units are MIG-single slices, which count as MIG slices), free ones with
// 1000 milli-GPU idle, used ones none; under shares (the packing simulator) each has its own free
// milli-GPU, which the model's table keeps for the node (not the node itself), and a pod may ask
// for a share of one device. The same plugins serve both by asking the cycle's snapshot for the
// model. Pure functions; thread-safe while nobody writes the model's table.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/model/device_model.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// The largest node the score formulas of the packing baselines normalize by (as FGD's simulator).
inline constexpr double kMaxSpecCpuMilli = 128000;
inline constexpr double kMaxSpecGpuMilli = 8000;

// Whether `node`'s devices are shares under `devices`: the shared model, and its table keeps shares
// for the node. Only then can a node whose free nvidia.com/gpu covers a pod lack a device for it.
inline bool KeepsDeviceShares(const NodeState& node, DeviceModel devices) {
  return !devices.SharesOf(node).empty();
}

// Free milli-GPU per device of `node` under `devices`, written to `out`.
void DeviceFreeMilli(const NodeState& node, DeviceModel devices, std::vector<int64_t>& out);

// The most MIG profiles a node is judged by (real GPUs offer fewer than 20): the measure looks at
// each for every shape, so this bounds what a node costs whatever it advertises.
inline constexpr size_t kMaxMigProfilesPerNode = 32;

// Storage behind the views IdleOf returns; reused from node to node, it spares allocations.
struct IdleBuffers {
  std::vector<int64_t> devices;  // free milli-GPU per device
  std::vector<IdleSlices> mig;   // free slices per MIG profile offered (nvidia.com/mig-<profile>)
};

// What is idle on `node`: CPU, devices under `devices`, and MIG slices; `buffers` hold the views
// and must outlive the result. CPU is unbounded when the node declares none (DeclaresCpu).
// Time-sliced MIG replicas (`.shared`) are not slices and are left out.
NodeIdle IdleOf(const NodeState& node, DeviceModel devices, IdleBuffers& buffers);
// IdleOf(node, ...).cpu_milli.
int64_t IdleCpuMilli(const NodeState& node);
// The free CPU left on a node with `cpu_milli` free after placing `pod` (PlacedOn's); unbounded
// stays so.
int64_t CpuAfter(int64_t cpu_milli, const TaskShape& pod);

// Whether the node declares a CPU amount (allocatable cpu), whatever the device model. The openb
// trace's and scenarios' nodes always do; a live node does when its Node object lists allocatable
// cpu, as every kubelet reports it (a hand-written inventory file may leave it out). A node that
// declares none has unbounded CPU, and the packing scores leave CPU out of their formulas for it.
bool DeclaresCpu(const NodeState& node);

// The shape of a pod's request: its CPU request, nvidia.com/gpu read as whole devices
// (N x 1000 milli) or, below 1000 milli, a share of one device, and the slices of the first MIG
// profile it asks for. `models` are the GPU models it accepts (empty: any).
TaskShape ShapeOf(const PodInfo& pod, std::vector<std::string> models = {});
// The same from a request list.
TaskShape ShapeOf(const ResourceList& requests, std::vector<std::string> models = {});

// The devices a pod of `shape` takes under the "best" rule: whole GPUs take the lowest-index fully
// free devices; a share takes the device with the least free milli-GPU that still fits (lowest
// index on ties). Empty when the shape does not fit or asks for no GPU.
std::vector<int> BestFitDevices(std::span<const int64_t> free, const TaskShape& shape);

// `node` after placing a pod of `pod`'s shape on it: its CPU taken (unless unbounded), its
// devices by BestFitDevices, its MIG slices of the pod's profile; `buffers` hold the views.
NodeIdle PlacedOn(const NodeIdle& node, const TaskShape& pod, IdleBuffers& buffers);

// FGD: how much a placement grows the node's expected fragmentation, as kube-scheduler integer
// score int(100 * sigmoid((before - after) / 1000)); for a share, the best device is tried; a MIG
// task takes its slices from the node's free ones.
struct FgdChoice {
  int64_t score = 0;
  int device = -1;  // for a share: the device that gives `score`; otherwise -1
};
FgdChoice FgdScore(const NodeIdle& node, const TaskShape& pod,
                   std::span<const WeightedShape> workload);
// The same, placing the pod in `buffers` (neither `node` nor another view in use may point into
// them), so a caller judging many nodes reuses their storage.
FgdChoice FgdScore(const NodeIdle& node, const TaskShape& pod,
                   std::span<const WeightedShape> workload, IdleBuffers& buffers);

// FgdScore(...).score of one pod against one workload for many nodes, each score computed once per
// distinct node. FgdScore reads a node's free CPU only to compare it, before and after the
// placement, with what the workload's shapes ask, so nodes that differ only in how much CPU they
// have free, but reach the same asks, get the same score: the live inventory's nodes differ by CPU
// far more often than by GPUs. Remembers one score per distinct node (GPUs, MIG slices, and which
// asks its CPU reaches) of at most kMaxRememberedDevices devices; larger ones are scored afresh.
// Not synchronized.
class FgdScores {
 public:
  static constexpr size_t kMaxRememberedDevices = 64;
  FgdScores(TaskShape pod, std::vector<WeightedShape> workload);
  // With `gpu_class`, a number the caller gives every node of equal devices, MIG slices and model
  // and no other, a node is told apart by that number and its CPU's asks, whatever its size.
  int64_t Of(const NodeIdle& node, std::optional<uint32_t> gpu_class = std::nullopt);

 private:
  // How many of the shapes' CPU asks `cpu_milli` reaches.
  uint32_t AsksReached(int64_t cpu_milli) const;
  // What tells nodes of different scores apart, written to key_.
  void WriteKey(const NodeIdle& node);

  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };

  TaskShape pod_;
  std::vector<WeightedShape> workload_;
  std::vector<int64_t> cpu_asks_;  // sorted, distinct
  IdleBuffers placed_;
  std::string key_;
  std::unordered_map<std::string, int64_t, KeyHash, std::equal_to<>> scores_;
  // By GPU class and the asks the CPU reaches before and after, 16 bits each.
  std::unordered_map<uint64_t, int64_t> scores_by_class_;
};

}  // namespace gpusched
