#include "gpusched/model/gpu_labels.h"

#include <limits>

#include <gtest/gtest.h>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"

#include "testing/test_support.h"

namespace gpusched::gpu_labels_test {
namespace {

using testing::NodeFixture;

TEST(GpuLabels, t4_plain_operator_node_is_full_gpus_despite_single_strategy) {
  NodeInfo n = NodeFixture("01-t4-plain-1gpu.json");
  EXPECT_EQ(n.gpu.product, "Tesla-T4");
  EXPECT_EQ(n.gpu.memory_mib, 15360);
  EXPECT_EQ(n.gpu.count, 1);
  EXPECT_EQ(n.gpu.family, "turing");
  EXPECT_EQ(n.gpu.compute_capability, Version::Parse("7.5"));
  EXPECT_EQ(n.gpu.mig_strategy, MigStrategy::kSingle);
  EXPECT_EQ(n.gpu.single_mig_profile(), "");
  EXPECT_EQ(n.allocatable.units("nvidia.com/gpu"), 1);
}

TEST(GpuLabels, time_sliced_renamed_node_offers_shared_units) {
  NodeInfo n = NodeFixture("02-t4-timeslice-4-renamed.json");
  EXPECT_EQ(n.gpu.sharing, SharingStrategy::kTimeSlicing);
  EXPECT_EQ(n.gpu.replicas, 4);
  EXPECT_EQ(n.gpu.mig_strategy, MigStrategy::kAbsent);
  EXPECT_EQ(n.allocatable.units("nvidia.com/gpu"), 0);
  EXPECT_EQ(n.allocatable.units("nvidia.com/gpu.shared"), 4);
  EXPECT_EQ(n.gpu.driver_version, Version::Parse("535.216.01"));
  EXPECT_EQ(n.gpu.cuda_runtime_version, Version::Parse("12.2"));
}

TEST(GpuLabels, mig_mixed_node_lists_each_profile) {
  NodeInfo n = NodeFixture("04-a100-40gb-x8-mig-mixed.json");
  EXPECT_EQ(n.gpu.mig_strategy, MigStrategy::kMixed);
  EXPECT_EQ(n.gpu.replicas, 0);
  ASSERT_EQ(n.gpu.mig_profiles.size(), 3u);
  EXPECT_EQ(n.gpu.mig_profiles[0].profile, "1g.5gb");
  EXPECT_EQ(n.gpu.mig_profiles[0].count, 16);
  EXPECT_EQ(n.gpu.mig_profiles[0].memory_mib, 4864);
  EXPECT_EQ(n.gpu.mig_profiles[2].profile, "3g.20gb");
  EXPECT_EQ(n.gpu.mig_profiles[2].product, "NVIDIA-A100-SXM4-40GB-MIG-3g.20gb");
  EXPECT_EQ(n.gpu.mig_config, "all-balanced");
  EXPECT_EQ(n.gpu.mig_config_state, MigConfigState::kSuccess);
  EXPECT_EQ(n.allocatable.units("nvidia.com/mig-2g.10gb"), 8);
}

TEST(GpuLabels, mig_single_node_reports_its_profile) {
  NodeInfo n = NodeFixture("06-h100-80gb-x8-mig-single-1g10gb.json");
  EXPECT_EQ(n.gpu.single_mig_profile(), "1g.10gb");
  EXPECT_EQ(n.gpu.count, 56);
  EXPECT_EQ(n.allocatable.units("nvidia.com/gpu"), 56);
}

TEST(GpuLabels, mps_node_is_shared) {
  NodeInfo n = NodeFixture("07-l4-x2-mps-4.json");
  EXPECT_EQ(n.gpu.sharing, SharingStrategy::kMps);
  EXPECT_EQ(n.gpu.family, "ada-lovelace");
}

TEST(GpuLabels, reconfiguring_node_shows_state_and_unhealthy_capacity) {
  NodeInfo n = NodeFixture("08-a100-40gb-x8-mig-reconfig-pending.json");
  EXPECT_EQ(n.gpu.mig_config_state, MigConfigState::kPending);
  EXPECT_EQ(n.gpu.device_plugin_deploy, "paused-for-mig-change");
  EXPECT_EQ(n.capacity.units("nvidia.com/gpu"), 8);
  EXPECT_EQ(n.allocatable.units("nvidia.com/gpu"), 0);
}

TEST(GpuLabels, malformed_or_missing_labels_are_unknown_not_errors) {
  std::vector<std::pair<std::string_view, std::string_view>> labels = {
      {"nvidia.com/gpu.memory", "lots"},
      {"nvidia.com/gpu.count", ""},
      {"nvidia.com/cuda.driver-version.full", "5x5"},
      {"nvidia.com/gpu.compute.major", "nine"},
      {"nvidia.com/mig.strategy", "weird"},
      {"nvidia.com/gpu.sharing-strategy", ""},
      {"nvidia.com/mig.config.state", "exploded"},
      {"nvidia.com/mig-1g.5gb.count", "many"},
  };
  GpuLabels g = ParseGpuLabels(labels);
  EXPECT_FALSE(g.memory_mib.has_value());
  EXPECT_FALSE(g.count.has_value());
  EXPECT_FALSE(g.driver_version.has_value());
  EXPECT_FALSE(g.compute_capability.has_value());
  EXPECT_EQ(g.mig_strategy, MigStrategy::kUnknown);
  EXPECT_EQ(g.sharing, SharingStrategy::kUnknown);
  EXPECT_EQ(g.mig_config_state, MigConfigState::kUnknown);
  ASSERT_EQ(g.mig_profiles.size(), 1u);
  EXPECT_FALSE(g.mig_profiles[0].count.has_value());

  GpuLabels empty = ParseGpuLabels({});
  EXPECT_EQ(empty.product, "");
  EXPECT_EQ(empty.mig_strategy, MigStrategy::kAbsent);
  EXPECT_EQ(empty.mig_config_state, MigConfigState::kAbsent);
}

TEST(GpuLabels, deprecated_driver_labels_fill_in_for_old_gfd) {
  GpuLabels g = ParseGpuLabels({{"nvidia.com/cuda.driver.major", "470"},
                                {"nvidia.com/cuda.driver.minor", "57"},
                                {"nvidia.com/cuda.driver.rev", "02"},
                                {"nvidia.com/cuda.runtime.major", "11"},
                                {"nvidia.com/cuda.runtime.minor", "4"}});
  EXPECT_EQ(g.driver_version, Version::Parse("470.57.2"));
  EXPECT_EQ(g.cuda_runtime_version, Version::Parse("11.4"));
}

TEST(GpuLabels, invalid_single_mig_product_has_no_profile) {
  GpuLabels g = ParseGpuLabels({{"nvidia.com/mig.strategy", "single"},
                                {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-INVALID"}});
  EXPECT_EQ(g.single_mig_profile(), "");
  GpuLabels shared =
      ParseGpuLabels({{"nvidia.com/mig.strategy", "single"},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"}});
  EXPECT_EQ(shared.single_mig_profile(), "1g.5gb");
}

TEST(GpuLabels, memory_label_in_bytes_is_read_as_bytes) {
  EXPECT_EQ(ParseGpuLabels({{"nvidia.com/gpu.memory", "16106127360"}}).memory_mib, 15360);
  EXPECT_EQ(ParseGpuLabels({{"nvidia.com/gpu.memory", "15360"}}).memory_mib, 15360);
  EXPECT_EQ(
      ParseGpuLabels({{"nvidia.com/mig-1g.5gb.memory", "5100273664"}}).mig_profiles[0].memory_mib,
      4864);
  EXPECT_FALSE(ParseGpuLabels({{"nvidia.com/gpu.memory", "-1"}}).memory_mib.has_value());
}

TEST(GpuLabels, gke_labels_name_product_memory_sharing_and_partitions) {
  GpuLabels l4 = ParseGpuLabels({{"cloud.google.com/gke-accelerator", "nvidia-l4"},
                                 {"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                                 {"cloud.google.com/gke-max-shared-clients-per-gpu", "3"}});
  EXPECT_EQ(l4.product, "NVIDIA-L4");
  EXPECT_EQ(l4.memory_mib, 23034);
  EXPECT_EQ(l4.sharing, SharingStrategy::kTimeSlicing);
  EXPECT_EQ(l4.replicas, 3);
  EXPECT_EQ(l4.platform, "gke");
  GpuLabels mps = ParseGpuLabels({{"cloud.google.com/gke-accelerator", "nvidia-a100-80gb"},
                                  {"cloud.google.com/gke-gpu-sharing-strategy", "mps"},
                                  {"cloud.google.com/gke-max-shared-clients-per-gpu", "x"}});
  EXPECT_EQ(mps.product, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(mps.sharing, SharingStrategy::kMps);
  EXPECT_FALSE(mps.replicas.has_value());
  GpuLabels mig = ParseGpuLabels({{"cloud.google.com/gke-accelerator", "nvidia-h100-80gb"},
                                  {"cloud.google.com/gke-gpu-partition-size", "3g.40gb"}});
  EXPECT_EQ(mig.product, "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb");
  EXPECT_EQ(mig.mig_strategy, MigStrategy::kSingle);
  EXPECT_EQ(mig.single_mig_profile(), "3g.40gb");
  EXPECT_EQ(mig.memory_mib, 40960);
  GpuLabels unknown = ParseGpuLabels({{"cloud.google.com/gke-accelerator", "nvidia-future-x"}});
  EXPECT_EQ(unknown.product, "");
  EXPECT_FALSE(unknown.memory_mib.has_value());
  EXPECT_EQ(unknown.platform, "gke");
}

TEST(GpuLabels, karpenter_and_eks_auto_mode_labels_describe_the_instance_gpu) {
  GpuLabels a10g = ParseGpuLabels({{"karpenter.k8s.aws/instance-gpu-name", "a10g"},
                                   {"karpenter.k8s.aws/instance-gpu-count", "4"},
                                   {"karpenter.k8s.aws/instance-gpu-memory", "24576"},
                                   {"karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"}});
  EXPECT_EQ(a10g.product, "NVIDIA-A10G");
  EXPECT_EQ(a10g.count, 4);
  EXPECT_EQ(a10g.memory_mib, 24576);
  EXPECT_EQ(a10g.platform, "karpenter");
  GpuLabels a100 = ParseGpuLabels({{"eks.amazonaws.com/instance-gpu-name", "a100"},
                                   {"eks.amazonaws.com/instance-gpu-memory", "81920"}});
  EXPECT_EQ(a100.product, "NVIDIA-A100-SXM4-80GB");
  GpuLabels neuron = ParseGpuLabels({{"karpenter.k8s.aws/instance-gpu-name", "inferentia2"},
                                     {"karpenter.k8s.aws/instance-gpu-manufacturer", "aws"}});
  EXPECT_EQ(neuron.platform, "");
  EXPECT_EQ(neuron.product, "");
  GpuLabels aks = ParseGpuLabels({{"kubernetes.azure.com/accelerator", "nvidia"}});
  EXPECT_EQ(aks.platform, "aks");
  EXPECT_EQ(aks.product, "");
}

// Where no GPU label names the GPU (AKS; EKS managed node groups without GFD or Karpenter), the
// node's instance type does.
TEST(GpuLabels, instance_types_name_the_gpu_where_nothing_else_does) {
  auto aks = [](std::string_view size) {
    return ParseGpuLabels({{"kubernetes.azure.com/accelerator", "nvidia"},
                           {"node.kubernetes.io/instance-type", size}});
  };
  EXPECT_EQ(aks("Standard_NC24ads_A100_v4").product, "NVIDIA-A100-80GB-PCIe");
  EXPECT_EQ(aks("Standard_ND96amsr_A100_v4").product, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(aks("Standard_ND96asr_v4").product, "NVIDIA-A100-SXM4-40GB");
  EXPECT_EQ(aks("Standard_ND96isr_H100_v5").product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(aks("Standard_NC4as_T4_v3").product, "Tesla-T4");
  EXPECT_EQ(aks("standard_nc6s_v3").memory_mib, 16384);
  EXPECT_EQ(aks("Standard_NV36ads_A10_v5").product, "");  // a fraction of a GPU: not named
  EXPECT_EQ(aks("Standard_D4s_v3").product, "");          // no GPU size
  EXPECT_EQ(aks(std::string(100, 'a') + "s_v3").product, "");
  auto ec2 = [](std::string_view type) {
    return ParseGpuLabels({{"node.kubernetes.io/instance-type", type}});
  };
  GpuLabels g5 = ec2("g5.12xlarge");
  EXPECT_EQ(g5.product, "NVIDIA-A10G");
  EXPECT_EQ(g5.platform, "eks");
  EXPECT_EQ(ec2("p4de.24xlarge").product, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(ec2("p6-b200.48xlarge").product, "NVIDIA-B200");
  EXPECT_EQ(ec2("m5.xlarge").product, "");
  EXPECT_EQ(ec2("g5").product, "");  // no dot: no EC2 instance type
  // Karpenter's GPU labels, where present, come first.
  GpuLabels karpenter = ParseGpuLabels({{"karpenter.k8s.aws/instance-gpu-name", "l4"},
                                        {"node.kubernetes.io/instance-type", "g5.xlarge"}});
  EXPECT_EQ(karpenter.product, "NVIDIA-L4");
}

TEST(GpuLabels, gfd_comes_before_the_platforms) {
  GpuLabels g = ParseGpuLabels({{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                                {"nvidia.com/gpu.sharing-strategy", "none"},
                                {"cloud.google.com/gke-accelerator", "nvidia-l4"},
                                {"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                                {"cloud.google.com/gke-max-shared-clients-per-gpu", "4"},
                                {"karpenter.k8s.aws/instance-gpu-name", "t4"},
                                {"karpenter.k8s.aws/instance-gpu-count", "2"}});
  EXPECT_EQ(g.product, "NVIDIA-A100-SXM4-40GB");
  EXPECT_EQ(g.memory_mib, 23034);  // GFD gave none; GKE's table comes next
  EXPECT_EQ(g.count, 2);           // neither GFD nor GKE gave one
  EXPECT_EQ(g.sharing, SharingStrategy::kNone);
  EXPECT_FALSE(g.replicas.has_value());
  EXPECT_EQ(g.platform, "gke");
}

TEST(GpuLabels, hostile_replica_counts_stay_within_bounds) {
  NodeState n = testing::LabeledNode("n", 8,
                                     {{"nvidia.com/gpu.replicas", "9223372036854775807"},
                                      {"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                                      {"nvidia.com/gpu.product", "X-MIG-1g.5gb"},
                                      {"nvidia.com/mig.strategy", "single"}});
  GpuUnit unit = GpuUnitOf(n.info, kGpuResource);
  EXPECT_EQ(unit.kind, GpuUnitKind::kReplica);
  EXPECT_EQ(unit.per_gpu, kMaxGpusPerNode);
  EXPECT_EQ(PhysicalMilli(unit, std::numeric_limits<int64_t>::max()), 1000);
}

TEST(GpuLabels, replicas_per_gpu_follow_from_the_count_when_unlabelled) {
  NodeState n = testing::LabeledNode(
      "n", 12,
      {{"nvidia.com/gpu.count", "3"}, {"nvidia.com/gpu.sharing-strategy", "time-slicing"}});
  EXPECT_EQ(GpuUnitOf(n.info, kGpuResource).per_gpu, 4);
  EXPECT_EQ(GpuUnitOf(testing::LabeledNode("w", 8, {}).info, kGpuResource).kind,
            GpuUnitKind::kWholeGpu);
}

}  // namespace
}  // namespace gpusched::gpu_labels_test
