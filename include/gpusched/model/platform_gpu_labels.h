// The GPU facts managed platforms write on their nodes, for nodes without GPU Feature Discovery:
//
// - GKE: cloud.google.com/gke-accelerator (nvidia-l4, nvidia-tesla-a100, ...), mapped to the
//   product string GFD would write and that GPU's memory; gke-gpu-sharing-strategy (time-sharing,
//   mps) with gke-max-shared-clients-per-gpu (replicas); gke-gpu-partition-size (a MIG profile,
//   each slice advertised as one nvidia.com/gpu, as under GFD's single strategy).
// - EKS through Karpenter or EKS Auto Mode: karpenter.k8s.aws/ or eks.amazonaws.com/
//   instance-gpu-name (a10g, t4, ...), -count, -memory (MiB per GPU), -manufacturer.
// - AKS: kubernetes.azure.com/accelerator says only that the node has NVIDIA GPUs; the VM size in
//   node.kubernetes.io/instance-type (Standard_NC24ads_A100_v4, ...) names the GPU.
// - EC2 nodes without Karpenter's labels (EKS managed node groups): the instance type's family
//   (g5, p4d, ...) names the GPU.
//
// Each platform is read on its own; gpu_labels.h decides what GFD's labels leave to them
// (GFD first, then GKE, then Karpenter/EKS, then AKS). A missing, malformed or unknown value
// leaves its field unknown; reading never fails. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched {

// The keys of the labels read here, spelled once for this reader and for the webhook that writes
// them into node affinity (gpusched/admission/platform_terms.h), with what each holds.
inline constexpr std::string_view kGkeAccelerator = "cloud.google.com/gke-accelerator";  // model
inline constexpr std::string_view kGkePartition =
    "cloud.google.com/gke-gpu-partition-size";  // a MIG profile
inline constexpr std::string_view kGkeSharing =
    "cloud.google.com/gke-gpu-sharing-strategy";  // time-sharing or mps
inline constexpr std::string_view kGkeSharedClients =
    "cloud.google.com/gke-max-shared-clients-per-gpu";  // replicas per GPU
inline constexpr std::string_view kAksAccelerator = "kubernetes.azure.com/accelerator";  // nvidia
inline constexpr std::string_view kInstanceType = "node.kubernetes.io/instance-type";    // VM size
// Karpenter's and EKS Auto Mode's labels: the same names after either prefix.
inline constexpr std::string_view kKarpenterPrefix = "karpenter.k8s.aws/";
inline constexpr std::string_view kEksAutoPrefix = "eks.amazonaws.com/";
inline constexpr std::string_view kInstanceGpuName = "instance-gpu-name";      // a10g, t4, ...
inline constexpr std::string_view kInstanceGpuCount = "instance-gpu-count";    // physical GPUs
inline constexpr std::string_view kInstanceGpuMemory = "instance-gpu-memory";  // MiB per GPU
inline constexpr std::string_view kInstanceGpuManufacturer = "instance-gpu-manufacturer";  // nvidia

enum class SharingStrategy;

// What one platform's labels say of a node's GPUs.
struct PlatformGpuFacts {
  std::string_view platform;  // "gke", "karpenter", "aks", "eks"; empty when its labels are absent
  std::string product;        // GFD-style, e.g. NVIDIA-L4, Tesla-T4; "" when unknown
  std::optional<int64_t> memory_mib;  // of one GPU
  std::optional<int64_t> count;       // physical GPUs
  std::optional<SharingStrategy> sharing;
  std::optional<int64_t> replicas;  // per GPU, under sharing
  std::string mig_profile;          // every GPU cut into slices of this profile (GKE), or ""
};

// The facts of every platform whose labels the node carries, in precedence order (GKE, then
// Karpenter/EKS, then AKS, then an EC2 instance type alone).
std::vector<PlatformGpuFacts> ReadPlatformGpuLabels(
    const std::vector<std::pair<std::string_view, std::string_view>>& labels);

// The platforms whose labels gpusched's node affinity names besides GFD's, which it always names
// (admission/hard_rule_affinity.h); a policy's `autoscaling.platforms`.
struct AffinityPlatforms {
  bool gke = true;
  bool karpenter = true;  // karpenter.k8s.aws/ and EKS Auto Mode's eks.amazonaws.com/
  bool aks = true;
  bool eks = true;  // EC2 instance types, for EKS nodes without Karpenter's labels
  bool operator==(const AffinityPlatforms&) const = default;
};

// The label values gpusched's tables know, for writing node affinity on them
// (admission/hard_rule_affinity.h): GKE's cloud.google.com/gke-accelerator values, Karpenter's
// instance-gpu-name values, Azure GPU VM sizes as node.kubernetes.io/instance-type writes them, and
// EC2 GPU instance types, and every product (GFD's spelling) any table names, sorted.
std::vector<std::string_view> KnownGkeAccelerators();
std::vector<std::string_view> KnownKarpenterGpuNames();
std::vector<std::string_view> KnownAzureGpuSizes();
// EC2 GPU instance types (node.kubernetes.io/instance-type) of the families gpusched knows.
std::vector<std::string_view> KnownEc2GpuInstanceTypes();
std::vector<std::string_view> KnownPlatformProducts();

}  // namespace gpusched
