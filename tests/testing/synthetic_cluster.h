// Synthetic clusters of realistic shape for benchmarks and the fake API server: v1.Node objects
// with the full GPU Feature Discovery and GPU Operator label sets, conditions, addresses, nodeInfo
// and an images list (about 6-9 KB of JSON each, like real GPU nodes), and v1.Pod objects with
// API-server defaults and managedFields (about 2-3 KB). Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusched::testing {

struct SyntheticCluster {
  std::vector<nlohmann::json> nodes;
  std::vector<nlohmann::json> pods;  // bound, Running; GPU pods first, then CPU-only pods
};

// `nodes` nodes in a realistic product mix, and `pods` pods of which about `gpu_share` ask for
// GPUs, placed so that nodes end up about `occupancy` full (0..1) of their GPUs.
SyntheticCluster MakeSyntheticCluster(int nodes, int pods, double gpu_share, double occupancy,
                                      uint64_t seed);

}  // namespace gpusched::testing
