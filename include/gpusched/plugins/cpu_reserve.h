// cpu-reserve: keep CPU on the nodes whose idle GPUs will need it.
//
// A GPU can only be handed out with some CPU. The observed workload says how much CPU its GPU pods
// ask per GPU (the demand ratio: the weighted CPU over the weighted GPUs of the shapes that want a
// GPU). A node whose idle GPUs outnumber what its free CPU can serve at that ratio strands the
// rest: stranded = max(0, idle GPU - free CPU / ratio). The score is how little a placement grows
// the stranding, 100 / (1 + e^(growth in GPUs)): 50 when it changes nothing, more when a CPU-light
// pod fills GPUs that lacked CPU, less when a pod takes CPU that idle GPUs needed (a CPU-only pod
// on a CPU-poor node). FGD counts CPU only when a whole typical task stops fitting; this measure
// moves with every CPU milli, so it separates the nodes FGD's ties leave equal.
//
// Not scored: pods that ask for no CPU, nodes that declare no CPU (DeclaresCpu,
// gpusched/packing/gpu_devices.h: a live Node without allocatable cpu, which kubelets always
// report but a hand-written inventory may leave out), snapshots where no node declares any, and
// every pod while no observed shape asks for both CPU and a GPU. Prepare computes the ratio once
// per cycle.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "gpusched/engine/plugin.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

class CpuReservePlugin : public NamedPlugin<CpuReservePlugin>,
                         public PreparePlugin,
                         public ScorePlugin {
 public:
  static constexpr std::string_view kName = "cpu-reserve";
  void Prepare(Cycle& cycle) const override;
  bool ScoresPod(const Cycle& cycle) const override;
  double Score(const Cycle& cycle, const NodeState& node) const override;
};

// CPU milli asked per milli-GPU by the GPU shapes of `workload`; none when no shape asks for both.
std::optional<double> CpuPerGpuMilli(std::span<const WeightedShape> workload);

// The milli-GPU of `node`'s idle devices that its free CPU cannot serve at `cpu_per_gpu_milli`
// (MIG slices are left out: the demand ratio is that of device pods).
double StrandedGpuMilli(const NodeIdle& node, double cpu_per_gpu_milli);
// The same from the node's idle milli-GPU of devices (DeviceIdleMilli) and free CPU.
double StrandedGpuMilli(int64_t idle_gpu_milli, int64_t cpu_milli, double cpu_per_gpu_milli);

}  // namespace gpusched
