#include "gpusched/model/platform_gpu_labels.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <span>
#include <string>

#include "gpusched/model/gpu_labels.h"

namespace gpusched {
namespace {

// A GPU model as a platform names it, the product string GFD writes for it and the memory of one
// GPU in MiB as GFD reports it (0: not known here). Products and memory as the reference's table
// lists them (shared/reference/nvidia-gpu-conventions.md §2.4: T4, V100, A10G, L4, L40S, A100,
// H100); the other memory sizes are what nvidia-smi commonly reports, a floor may be off by a few
// hundred MiB there.
struct KnownGpu {
  std::string_view name;
  std::string_view product;
  int64_t memory_mib;
};

// cloud.google.com/gke-accelerator values (GKE's GPU documentation).
constexpr KnownGpu kGkeAccelerators[] = {
    {"nvidia-tesla-k80", "Tesla-K80", 11441},
    {"nvidia-tesla-p4", "Tesla-P4", 7680},
    {"nvidia-tesla-p100", "Tesla-P100-PCIE-16GB", 16384},
    {"nvidia-tesla-v100", "Tesla-V100-SXM2-16GB", 16384},
    {"nvidia-tesla-t4", "Tesla-T4", 15360},
    {"nvidia-l4", "NVIDIA-L4", 23034},
    {"nvidia-tesla-a100", "NVIDIA-A100-SXM4-40GB", 40960},
    {"nvidia-a100-80gb", "NVIDIA-A100-SXM4-80GB", 81920},
    {"nvidia-h100-80gb", "NVIDIA-H100-80GB-HBM3", 81559},
    {"nvidia-h100-mega-80gb", "NVIDIA-H100-80GB-HBM3", 81559},
    {"nvidia-h200-141gb", "NVIDIA-H200", 143771},
    {"nvidia-b200", "NVIDIA-B200", 183359},
    {"nvidia-gb200", "NVIDIA-GB200", 0},
    {"nvidia-rtx-pro-6000", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", 0},
};

// karpenter.k8s.aws/instance-gpu-name values (EC2's GPU names, lower-cased). Models sold with two
// memory sizes are told apart by the memory label (kKarpenterLargeVariants).
constexpr KnownGpu kKarpenterGpus[] = {
    {"k80", "Tesla-K80", 11441},
    {"m60", "Tesla-M60", 8129},
    {"t4", "Tesla-T4", 15360},
    {"v100", "Tesla-V100-SXM2-16GB", 16384},
    {"a10g", "NVIDIA-A10G", 23028},
    {"l4", "NVIDIA-L4", 23034},
    {"l40s", "NVIDIA-L40S", 46068},
    {"a100", "NVIDIA-A100-SXM4-40GB", 40960},
    {"h100", "NVIDIA-H100-80GB-HBM3", 81559},
    {"h200", "NVIDIA-H200", 143771},
    {"b200", "NVIDIA-B200", 183359},
};

// The larger-memory variants, chosen when the memory label says more than the smaller one has.
constexpr KnownGpu kKarpenterLargeVariants[] = {
    {"v100", "Tesla-V100-SXM2-32GB", 32768},
    {"a100", "NVIDIA-A100-SXM4-80GB", 81920},
};

// EC2 instance families (node.kubernetes.io/instance-type up to its dot) and their GPU, for EKS
// nodes without Karpenter's labels (managed node groups, self-managed nodes). Families with
// fractional or non-NVIDIA accelerators are left out.
constexpr KnownGpu kEc2Families[] = {
    {"p3", "Tesla-V100-SXM2-16GB", 16384},
    {"p3dn", "Tesla-V100-SXM2-32GB", 32768},
    {"p4d", "NVIDIA-A100-SXM4-40GB", 40960},
    {"p4de", "NVIDIA-A100-SXM4-80GB", 81920},
    {"p5", "NVIDIA-H100-80GB-HBM3", 81559},
    {"p5e", "NVIDIA-H200", 143771},
    {"p5en", "NVIDIA-H200", 143771},
    {"g4dn", "Tesla-T4", 15360},
    {"g5", "NVIDIA-A10G", 23028},
    {"g6", "NVIDIA-L4", 23034},
    {"g6e", "NVIDIA-L40S", 46068},
    {"p6-b200", "NVIDIA-B200", 183359},
};

// Azure VM sizes (node.kubernetes.io/instance-type, lower-cased) by the end of their name, for
// AKS, whose own label says only that a node has NVIDIA GPUs. Checked in order: the more specific
// endings first. Sizes with a fraction of a GPU (NVadsA10 v5) are left out.
constexpr KnownGpu kAzureSizeEndings[] = {
    {"amsr_a100_v4", "NVIDIA-A100-SXM4-80GB", 81920},
    {"asr_v4", "NVIDIA-A100-SXM4-40GB", 40960},
    {"ads_a100_v4", "NVIDIA-A100-80GB-PCIe", 81920},
    {"isr_h100_v5", "NVIDIA-H100-80GB-HBM3", 81559},
    {"ads_h100_v5", "NVIDIA-H100-NVL", 95830},
    {"isr_h200_v5", "NVIDIA-H200", 143771},
    {"as_t4_v3", "Tesla-T4", 15360},
    {"s_v3", "Tesla-V100-PCIE-16GB", 16384},  // the NCv3 sizes (NC6s_v3 ... NC24rs_v3)
};

// Azure GPU VM sizes as node.kubernetes.io/instance-type writes them, for the node affinity that
// names them (Azure's GPU VM size documentation); kAzureSizeEndings says which GPU each has.
constexpr std::string_view kAzureGpuSizes[] = {
    "Standard_NC6s_v3",          "Standard_NC12s_v3",        "Standard_NC24s_v3",
    "Standard_NC24rs_v3",        "Standard_NC4as_T4_v3",     "Standard_NC8as_T4_v3",
    "Standard_NC16as_T4_v3",     "Standard_NC64as_T4_v3",    "Standard_NC24ads_A100_v4",
    "Standard_NC48ads_A100_v4",  "Standard_NC96ads_A100_v4", "Standard_ND96asr_v4",
    "Standard_ND96amsr_A100_v4", "Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5",
    "Standard_ND96isr_H100_v5",  "Standard_ND96isr_H200_v5",
};

template <size_t N>
std::vector<std::string_view> NamesOf(const KnownGpu (&table)[N]) {
  std::vector<std::string_view> out;
  for (const KnownGpu& g : table) out.push_back(g.name);
  return out;
}

const KnownGpu* Find(std::span<const KnownGpu> table, std::string_view name) {
  for (const KnownGpu& g : table) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

// A positive decimal integer, or nullopt.
std::optional<int64_t> PositiveInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::optional<int64_t> KnownMemory(const KnownGpu* g) {
  return g && g->memory_mib > 0 ? std::optional<int64_t>(g->memory_mib) : std::nullopt;
}

// A node's labels, looked up by key, or by name under a prefix (Karpenter's and EKS Auto Mode's).
class NodeLabels {
 public:
  explicit NodeLabels(const std::vector<std::pair<std::string_view, std::string_view>>& labels)
      : labels_(labels) {}

  std::optional<std::string_view> Get(std::string_view name, std::string_view prefix = {}) const {
    for (const auto& [k, v] : labels_) {
      if (k.size() == prefix.size() + name.size() && k.starts_with(prefix) && k.ends_with(name)) {
        return v;
      }
    }
    return std::nullopt;
  }

 private:
  const std::vector<std::pair<std::string_view, std::string_view>>& labels_;
};

std::optional<PlatformGpuFacts> Gke(const NodeLabels& gke) {
  auto accelerator = gke.Get(kGkeAccelerator);
  if (!accelerator) return std::nullopt;
  PlatformGpuFacts f;
  f.platform = "gke";
  const KnownGpu* g = Find(kGkeAccelerators, *accelerator);
  if (g) f.product = g->product;
  f.memory_mib = KnownMemory(g);
  if (auto strategy = gke.Get(kGkeSharing)) {
    if (*strategy == "time-sharing") f.sharing = SharingStrategy::kTimeSlicing;
    if (*strategy == "mps") f.sharing = SharingStrategy::kMps;
    if (f.sharing) f.replicas = PositiveInt(gke.Get(kGkeSharedClients).value_or(""));
  }
  if (auto partition = gke.Get(kGkePartition)) f.mig_profile = *partition;
  return f;
}

std::optional<PlatformGpuFacts> Karpenter(const NodeLabels& aws, std::string_view prefix) {
  auto name = aws.Get(kInstanceGpuName, prefix);
  auto count = aws.Get(kInstanceGpuCount, prefix);
  if (!name && !count) return std::nullopt;
  // Another vendor's accelerator (an Inferentia, an AMD GPU) is no NVIDIA GPU to describe.
  if (auto maker = aws.Get(kInstanceGpuManufacturer, prefix); maker && *maker != "nvidia") {
    return std::nullopt;
  }
  PlatformGpuFacts f;
  f.platform = "karpenter";
  f.count = PositiveInt(count.value_or(""));
  f.memory_mib = PositiveInt(aws.Get(kInstanceGpuMemory, prefix).value_or(""));
  const KnownGpu* g = name ? Find(kKarpenterGpus, *name) : nullptr;
  if (const KnownGpu* large = g ? Find(kKarpenterLargeVariants, g->name) : nullptr;
      large && f.memory_mib && *f.memory_mib > g->memory_mib * 11 / 10) {
    g = large;
  }
  if (g) f.product = g->product;
  if (!f.memory_mib) f.memory_mib = KnownMemory(g);
  return f;
}

// The GPU of an instance type, in facts of `platform`, or nullopt when the table does not know it.
std::optional<PlatformGpuFacts> FromInstanceType(std::string_view platform, const KnownGpu* g) {
  if (!g) return std::nullopt;
  PlatformGpuFacts f;
  f.platform = platform;
  f.product = g->product;
  f.memory_mib = KnownMemory(g);
  return f;
}

// An EC2 instance type's family: "g5" of "g5.xlarge", "p6-b200" of "p6-b200.48xlarge".
std::optional<PlatformGpuFacts> Ec2(std::optional<std::string_view> instance_type) {
  if (!instance_type) return std::nullopt;
  std::string_view family = instance_type->substr(0, instance_type->find('.'));
  if (family.size() == instance_type->size()) return std::nullopt;  // no dot: not EC2's
  return FromInstanceType("eks", Find(kEc2Families, family));
}

std::optional<PlatformGpuFacts> Aks(const NodeLabels& azure,
                                    std::optional<std::string_view> instance_type) {
  auto accelerator = azure.Get(kAksAccelerator);
  if (!accelerator || *accelerator != "nvidia") return std::nullopt;
  PlatformGpuFacts f;
  f.platform = "aks";
  if (instance_type && instance_type->size() <= 64) {
    std::string size(*instance_type);
    for (char& c : size) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (size.starts_with("standard_n")) {
      for (const KnownGpu& g : kAzureSizeEndings) {
        if (size.ends_with(g.name)) {
          f.product = g.product;
          f.memory_mib = KnownMemory(&g);
          break;
        }
      }
    }
  }
  return f;
}

}  // namespace

std::vector<std::string_view> KnownGkeAccelerators() { return NamesOf(kGkeAccelerators); }

std::vector<std::string_view> KnownKarpenterGpuNames() { return NamesOf(kKarpenterGpus); }

std::vector<std::string_view> KnownAzureGpuSizes() {
  return {std::begin(kAzureGpuSizes), std::end(kAzureGpuSizes)};
}

std::vector<std::string_view> KnownEc2GpuInstanceTypes() {
  // Every size EC2 sells a GPU family in, and some it does not: a name no node carries costs
  // nothing in an In list.
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> out;
    for (const KnownGpu& family : kEc2Families) {
      for (std::string_view size : {"xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge",
                                    "16xlarge", "24xlarge", "48xlarge", "metal"}) {
        out.push_back(std::string(family.name) + "." + std::string(size));
      }
    }
    return out;
  }();
  return {kTypes.begin(), kTypes.end()};
}

std::vector<std::string_view> KnownPlatformProducts() {
  std::vector<std::string_view> out;
  for (std::span<const KnownGpu> table :
       {std::span<const KnownGpu>(kGkeAccelerators), std::span<const KnownGpu>(kKarpenterGpus),
        std::span<const KnownGpu>(kKarpenterLargeVariants), std::span<const KnownGpu>(kEc2Families),
        std::span<const KnownGpu>(kAzureSizeEndings)}) {
    for (const KnownGpu& g : table) out.push_back(g.product);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<PlatformGpuFacts> ReadPlatformGpuLabels(
    const std::vector<std::pair<std::string_view, std::string_view>>& labels) {
  std::vector<PlatformGpuFacts> out;
  const NodeLabels node(labels);
  if (auto f = Gke(node)) out.push_back(std::move(*f));
  // Karpenter's labels, or EKS Auto Mode's (its managed Karpenter) under its own prefix.
  auto eks = Karpenter(node, kKarpenterPrefix);
  if (!eks) eks = Karpenter(node, kEksAutoPrefix);
  if (eks) out.push_back(std::move(*eks));
  std::optional<std::string_view> instance_type = node.Get(kInstanceType);
  if (auto f = Aks(node, instance_type)) {
    out.push_back(std::move(*f));
  } else if (auto ec2 = Ec2(instance_type); ec2 && !eks) {
    // An EC2 node without Karpenter's labels: only its instance type names the GPU.
    out.push_back(std::move(*ec2));
  }
  return out;
}

}  // namespace gpusched
