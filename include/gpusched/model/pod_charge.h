// What a pod holds of the node it is bound to: the one accounting rule the live inventory
// (gpusched/cluster/cluster_ledger.h), the extender's assumptions, the simulator and planning's
// what-ifs (gpusched/planning/working_nodes.h) all charge by.
//
// A terminal pod (Succeeded or Failed) holds nothing. Any other pod holds its effective requests
// of cpu, memory and the GPU resources of the GpuResourceNames given (the policy's extra names
// included), one pod, and one GPU pod when it asks for any GPU resource. Other resources
// (ephemeral-storage, hugepages, extended resources that are not GPUs) are not charged: usage is
// what gpusched judges nodes by (NodeState::used), and a node's usage then has few names whatever
// its pods ask for. Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

struct PodCharge {
  ResourceList requests;  // cpu, memory and GPU resources, positive amounts, milli-units
  bool holds = false;     // counts against its node at all (false: a terminal pod)
  bool gpu_pod = false;   // asks for a GPU resource

  // The charge of a non-terminal pod asking for `cpu_milli`, `memory_milli` and `gpu_demand`
  // (GpuDemand: its positive requests of GPU resources): for those who keep only these.
  static PodCharge Of(int64_t cpu_milli, int64_t memory_milli, ResourceList gpu_demand);
  bool operator==(const PodCharge&) const = default;
};

// What `pod` holds of its node, GPU resources being those of `gpu_names`.
PodCharge ChargeOf(const PodInfo& pod, const GpuResourceNames& gpu_names);

// Adds `charge` to `node`'s usage and pod counts.
void ChargePod(NodeState& node, const PodCharge& charge);
// Takes `charge` back from `node`: the reverse of ChargePod, no amount or count below zero.
void UnchargePod(NodeState& node, const PodCharge& charge);

}  // namespace gpusched
