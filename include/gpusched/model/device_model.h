// DeviceModel: how the nodes of one snapshot offer their GPU devices, chosen by whoever builds the
// snapshot (ClusterSnapshot::device_model()), never guessed from a node; and DeviceShares, the
// table of per-device shares the simulator's model reads.
//
// The live server counts devices: Kubernetes' device plugin advertises nvidia.com/gpu as whole
// units and a pod takes whole units, so a node's devices are its allocatable nvidia.com/gpu units,
// the free ones wholly idle (1000 milli-GPU) and the used ones not at all. The packing simulator
// models GPU-sharing device plugins (FGD, USENIX ATC'23): each device keeps its own free milli-GPU
// and a pod may take a share of one device. Those shares are no part of a node (NodeState has
// none): the simulator keeps them for the nodes of its run and hands them over with the snapshot
// it builds, as a DeviceShares table in its DeviceModel.
//
// The table finds a node's shares by the node's address among the nodes it covers (one array, the
// run's): two compares and a subtraction, no hashing and no name lookup (a simulator run costs 0.4%
// more instructions than with shares kept in the node; by name 6.5%, by a hash map of addresses
// 0.8%). A node it does not cover (a node of no GPUs, or the simulator's snapshot's own copy of
// the cluster as the run starts, when every device is wholly free) keeps no shares and has its
// nvidia.com/gpu units counted whole.
//
// What depends on the model: the devices packing reads (gpusched/packing/gpu_devices.h), gpu-fit's
// per-device check, and whether the shares are part of a node's scheduling content
// (gpusched/model/node.h). Under whole devices nothing is looked up: a null test. Nothing tests
// "am I in the simulator?" any other way.
//
// Views: a DeviceShares reads storage its owner keeps (the simulator's run, which changes the
// shares as pods commit, between scheduling cycles, never during one); a DeviceModel points at its
// table. Neither owns what it reads, and both are valid only while that storage lives and stays in
// place. Reading is thread-safe while nobody writes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gpusched/model/node.h"

namespace gpusched {

// Free milli-GPU per device (0..1000 each) of the nodes of one array, by node address.
class DeviceShares {
 public:
  // Covers no node.
  DeviceShares() = default;
  // Covers `nodes`: nodes[i] keeps shares[i] (the spans are of equal size).
  DeviceShares(std::span<const NodeState> nodes, std::span<const std::vector<int32_t>> shares)
      : first_(nodes.data()), end_(nodes.data() + nodes.size()), shares_(shares.data()) {}

  // `node`'s shares; empty when the table does not cover it.
  std::span<const int32_t> Of(const NodeState& node) const {
    // `node` may be outside the array, where `<` on pointers is unspecified; std::less orders any.
    const std::less<const NodeState*> before;
    if (before(&node, first_) || !before(&node, end_)) return {};
    return shares_[&node - first_];
  }

 private:
  const NodeState* first_ = nullptr;
  const NodeState* end_ = nullptr;
  const std::vector<int32_t>* shares_ = nullptr;
};

class DeviceModel {
 public:
  // The live server's (ClusterLedger's snapshots): whole devices counted from nvidia.com/gpu.
  static constexpr DeviceModel WholeDevices() { return DeviceModel(nullptr); }
  // The packing simulator's: free milli-GPU per device, as `shares` keeps them (it must outlive
  // the model and every copy). A node the table does not cover has its nvidia.com/gpu units
  // counted whole.
  static constexpr DeviceModel SharedDevices(const DeviceShares& shares) {
    return DeviceModel(&shares);
  }
  static DeviceModel SharedDevices(const DeviceShares&&) = delete;  // would point at a temporary

  // Whether this is the shared model (whether any node may keep shares).
  bool keeps_shares() const { return shares_ != nullptr; }
  // `node`'s shares under this model: empty under whole devices, and for a node the table does not
  // cover.
  std::span<const int32_t> SharesOf(const NodeState& node) const {
    return shares_ == nullptr ? std::span<const int32_t>{} : shares_->Of(node);
  }

 private:
  explicit constexpr DeviceModel(const DeviceShares* shares) : shares_(shares) {}

  const DeviceShares* shares_;  // null: whole devices
};

}  // namespace gpusched
