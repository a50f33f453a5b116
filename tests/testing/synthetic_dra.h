// Synthetic DRA objects at a real cluster's size, for the fake API server (issue #48's
// measurement, bench/dra_scale.sh): Ready nodes without nvidia.com/gpu, each publishing its eight
// A100-SXM4-80GB GPUs as NVIDIA's DRA driver does with partitionable devices (a full device
// gpu-<i> and all 25 MIG placements per GPU, consuming the GPU's counter set gpu-<i>-counter-set),
// NVIDIA's DeviceClasses, ordinary ResourceClaims of a busy cluster (about half allocated, with
// the pods they are reserved for), and hostile claims of ~1.27 MB of valid CEL each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpusched::testing {

// The collections objects are emitted to: nodes and pods (FakeApiServer::UpsertNode, UpsertPod)
// and the resource.k8s.io/v1 ones (UpsertObject).
inline constexpr const char* kDraNodesCollection = "nodes";
inline constexpr const char* kDraPodsCollection = "pods";
inline constexpr const char* kResourceSlices = "/apis/resource.k8s.io/v1/resourceslices";
inline constexpr const char* kResourceClaims = "/apis/resource.k8s.io/v1/resourceclaims";
inline constexpr const char* kDeviceClasses = "/apis/resource.k8s.io/v1/deviceclasses";

inline constexpr int kDraGpusPerNode = 8;
inline constexpr int kDraGpusPerSlice =
    2;  // 2 x 26 devices: within the 64 of a slice with counters
inline constexpr const char* kHostileNamespace = "hostile";

struct SyntheticDraOptions {
  int nodes = 0;           // Ready nodes, 8 GPUs each as DRA devices
  int claims = 0;          // ordinary claims over 50 namespaces, about half allocated
  int hostile_claims = 0;  // claims of about hostile_claim_bytes of valid CEL each
  size_t hostile_claim_bytes = 1270000;
};

// "dra-node-00042".
std::string DraNodeName(int index);
// "hostile-<index>" in namespace kHostileNamespace.
std::string HostileClaimName(int index);

// Calls emit(collection, object) for every object, nodes and DeviceClasses first, one at a time
// (so a caller that stores them holds one copy).
void GenerateSyntheticDra(const SyntheticDraOptions& options,
                          const std::function<void(const char*, nlohmann::json)>& emit);

// Hostile claim `index`: 32 requests of gpu.nvidia.com, each with 4 selectors of ~bytes/128 bytes
// of valid CEL (at most 10,100 bytes each, under the API's 10 KiB); `touch` > 0 sets the label
// gpusched-bench/touch, as an update that changes nothing else.
nlohmann::json MakeHostileClaim(int index, size_t bytes, int touch = 0);

}  // namespace gpusched::testing
