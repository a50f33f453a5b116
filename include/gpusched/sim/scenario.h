// Packing scenarios: a synthetic cluster and workload for `gpusched simulate --scenario FILE`,
// written as YAML, for the shapes the openb trace lacks (MIG-partitioned nodes, multi-GPU
// training, mixed GPU products with GFD labels). Node templates and pod mixes expand into the
// simulator's trace values:
//
//   apiVersion: gpusched.io/v1alpha1
//   kind: PackingScenario
//   nodes:                     # template -> nodes <name>-0 .. <name>-<count-1>
//   - {name: h100, count: 16, cpu: "96", memory: 1Ti, gpus: 8, product: NVIDIA-H100-80GB-HBM3,
//      labels: {nvidia.com/gpu.family: hopper}, resources: {nvidia.com/mig-1g.10gb: 7}}
//   pods:                      # mix -> pods <name>-0 .. ; the simulator shuffles and tunes them
//   - {name: train, count: 40, cpu: "32", memory: 256Gi, gpus: 8, products:
//   [NVIDIA-H100-80GB-HBM3]}
//   - {name: notebook, count: 200, cpu: "4", memory: 16Gi, gpus: 1, gpuMilli: 300}
//   - {name: infer-mig, count: 300, cpu: "8", memory: 32Gi, resources: {nvidia.com/mig-1g.10gb: 1}}
//
// `gpus` are whole devices of nvidia.com/gpu (with `gpuMilli` below 1000 for a shared share of one
// device); `resources` are other extended resources, in units (MIG slices count toward GPU
// capacity and use by their compute slices: 3g.40gb = 3/7 of a GPU). Errors raise TraceError with
// "FILE:LINE: KEY: problem", or FileError for an unreadable file (both InputErrors). Pure
// functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/sim/openb_trace.h"

namespace gpusched {

struct Scenario {
  std::vector<TraceNode> nodes;
  std::vector<TracePod> pods;
};

// Largest scenario file read; templates keep scenarios to a few kilobytes.
inline constexpr size_t kMaxScenarioBytes = size_t{16} << 20;

Scenario ParseScenario(std::string_view yaml, const std::string& source);
Scenario LoadScenario(const std::string& path);

}  // namespace gpusched
