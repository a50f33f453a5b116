// DeviceModel: how the nodes of one snapshot offer their GPU devices, chosen by whoever builds the
// snapshot (ClusterSnapshot::device_model()), never guessed from a node.
//
// The live server counts devices: Kubernetes' device plugin advertises nvidia.com/gpu as whole
// units and a pod takes whole units, so a node's devices are its allocatable nvidia.com/gpu units,
// the free ones wholly idle (1000 milli-GPU) and the used ones not at all. The packing simulator
// models GPU-sharing device plugins (FGD, USENIX ATC'23): each device keeps its own free milli-GPU
// (NodeState::device_free_milli) and a pod may take a share of one device.
//
// What depends on the model: the devices packing reads (gpusched/packing/gpu_devices.h), gpu-fit's
// per-device check, and whether the shares are part of a node's scheduling content
// (gpusched/model/node.h). Nothing tests "am I in the simulator?" any other way.
#ifndef GPUSCHED_MODEL_DEVICE_MODEL_H_
#define GPUSCHED_MODEL_DEVICE_MODEL_H_

#include <cstdint>

namespace gpusched {

enum class DeviceModel : uint8_t {
  // The live server's (ClusterLedger's snapshots): whole devices counted from nvidia.com/gpu.
  // NodeState::device_free_milli is never read, hashed or compared.
  kWholeDevices,
  // The packing simulator's: free milli-GPU per device, NodeState::device_free_milli. A node that
  // keeps no shares (a trace node without GPUs) has its nvidia.com/gpu units counted whole.
  kSharedDevices,
};

}  // namespace gpusched

#endif  // GPUSCHED_MODEL_DEVICE_MODEL_H_
