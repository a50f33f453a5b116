// The corpus of real nodes (tests/fixtures/real-nodes): for each, what gpusched must read of its
// GPUs, and the verdict of a set of probe pods, checked through capacity, the engine's filter,
// explain and the extender service, which must agree.
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/explain/explain.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::real_nodes_test {
namespace {

// A probe pod: its resources, annotations and node pins as JSON members of the pod.
struct Probe {
  std::string_view name;
  std::string_view limits;    // JSON object
  std::string_view metadata;  // extra metadata members, or ""
  std::string_view spec;      // extra spec members, or ""
};

constexpr Probe kProbes[] = {
    {"gpu-1", R"({"nvidia.com/gpu":"1"})", "", ""},
    {"gpu-4", R"({"nvidia.com/gpu":"4"})", "", ""},
    {"gpu-8", R"({"nvidia.com/gpu":"8"})", "", ""},
    {"exclusive", R"({"nvidia.com/gpu":"1"})",
     R"("annotations":{"gpusched.io/sharing":"exclusive"},)", ""},
    {"memory-20Gi", R"({"nvidia.com/gpu":"1"})",
     R"("annotations":{"gpusched.io/min-gpu-memory":"20Gi"},)", ""},
    {"product-L4", R"({"nvidia.com/gpu":"1"})",
     R"("annotations":{"gpusched.io/gpu-product":"NVIDIA-L4"},)", ""},
    {"selector-T4", R"({"nvidia.com/gpu":"1"})", "",
     R"("nodeSelector":{"nvidia.com/gpu.product":"Tesla-T4"},)"},
    {"affinity-A100", R"({"nvidia.com/gpu":"1"})", "",
     R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",
        "operator":"In","values":["NVIDIA-A100-SXM4-40GB","NVIDIA-A100-SXM4-80GB"]}]}]}}},)"},
    // A pin on a cloud label is kube-scheduler's to judge: gpusched takes it as met.
    {"gke-pin", R"({"nvidia.com/gpu":"1"})", "",
     R"("nodeSelector":{"cloud.google.com/gke-accelerator":"nvidia-l4"},)"},
    {"shared-1", R"({"nvidia.com/gpu.shared":"1"})", "", ""},
    {"mig-1g.5gb", R"({"nvidia.com/mig-1g.5gb":"1"})", "", ""},
    // Driver labels of every GFD generation are read; no platform label gives the driver.
    {"driver-535", R"({"nvidia.com/gpu":"1"})",
     R"("annotations":{"gpusched.io/min-cuda-driver":"535"},)", ""},
};

std::string PodJson(const Probe& p) {
  return std::string(R"({"metadata":{)") + std::string(p.metadata) + R"("name":")" +
         std::string(p.name) + R"(","namespace":"probe","uid":"probe-)" + std::string(p.name) +
         R"("},"spec":{)" + std::string(p.spec) +
         R"("containers":[{"name":"c","resources":{"limits":)" + std::string(p.limits) + "}}]}}";
}

// What each source shows. verdicts: one letter per kProbes entry, P pass, F unschedulable
// (retryable), U unresolvable.
struct Expected {
  std::string_view file;
  double gpus;  // physical GPUs, as capacity counts them
  std::string_view product;
  std::optional<int64_t> memory_mib;  // of one unit of nvidia.com/gpu (an MPS replica's share)
  int64_t replicas;
  int64_t slices;
  std::string_view verdicts;
};

//                 probes: gpu-1 gpu-4 gpu-8 exclusive memory product selector affinity gke-pin
//                         shared mig driver
const Expected kCorpus[] = {
    {"gfd-v0.4-t4-memory-bytes.yaml", 1, "Tesla-T4", 15360, 0, 0, "PUUPUUPUPUUU"},
    {"operator-v24-a100-80gb-x8.yaml", 8, "NVIDIA-A100-SXM4-80GB", 81920, 0, 0, "PPPPPUUPPUUP"},
    {"timeslice-l4-x1-replicas4.yaml", 1, "NVIDIA-L4-SHARED", 23034, 4, 0, "PFUUPPUUPUUP"},
    {"timeslice-t4-x4-replicas4.yaml", 4, "Tesla-T4-SHARED", 15360, 16, 0, "PPPUUUUUPUUP"},
    {"timeslice-t4-x1-replicas8.yaml", 1, "Tesla-T4-SHARED", 15360, 8, 0, "PPPUUUUUPUUU"},
    {"timeslice-t4-x4-renamed.yaml", 4, "Tesla-T4", 15360, 16, 0, "UUUUUUUUUPUU"},
    {"mps-l4-x2-replicas4.yaml", 2, "NVIDIA-L4-SHARED", 23034 / 4, 8, 0, "PUUUUPUUPUUP"},
    {"mig-single-a100-40gb-x1-1g5gb.yaml", 1, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 4864, 0, 7,
     "PPUPUUUUPUUU"},
    {"mig-single-h100-x8-1g10gb.yaml", 8, "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", 9984, 0, 56,
     "PPPPUUUUPUUU"},
    {"mig-mixed-a100-40gb-x8-old-labeller.yaml", 8, "NVIDIA-A100-SXM4-40GB", 40960, 0, 32,
     "UUUUUUUUUUPU"},
    // maintenance refuses it as retryable, but gpu-fit's unresolvable "too few allocatable" (the
    // device plugin is gone) comes first: preemption cannot help there either.
    {"mig-reconfig-pending-a100-40gb-x8.yaml", 0, "NVIDIA-A100-SXM4-40GB", 40960, 0, 0,
     "UUUUUUUUUUUU"},
    {"broken-gfd-labels-no-resource.yaml", 0, "Tesla-T4", 15360, 0, 0, "UUUUUUUUUUUU"},
    {"gke-l4-standard.yaml", 1, "NVIDIA-L4", 23034, 0, 0, "PUUPPPUUPUUU"},
    {"gke-l4-time-sharing.yaml", 1, "NVIDIA-L4", 23034, 4, 0, "PPUUPPUUPUUU"},
    {"gke-a100-mig-1g5gb.yaml", 1, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 5120, 0, 7, "PPUPUUUUPUUU"},
    {"eks-managed-g5-no-gfd.yaml", 1, "NVIDIA-A10G", 23028, 0, 0, "PUUPPUUUPUUU"},
    {"karpenter-g5-a10g.yaml", 1, "NVIDIA-A10G", 24576, 0, 0, "PUUPPUUUPUUU"},
    {"karpenter-g4dn-timeslice-no-gfd.yaml", 1, "Tesla-T4", 16384, 4, 0, "PPUUUUUUPUUU"},
    {"karpenter-p4d-with-gfd.yaml", 8, "NVIDIA-A100-SXM4-40GB", 40960, 0, 0, "PPFPPUUPPUUP"},
    {"aks-nc6s-v3-v100.yaml", 1, "Tesla-V100-PCIE-16GB", 16384, 0, 0, "PUUPUUUUPUUU"},
};

char Letter(VerdictCode code) {
  switch (code) {
    case VerdictCode::kPass:
      return 'P';
    case VerdictCode::kUnschedulable:
      return 'F';
    case VerdictCode::kUnresolvable:
      return 'U';
  }
  return '?';
}

// The corpus node of `file`, its text changed by `edit` first when given.
std::shared_ptr<const ClusterSnapshot> SnapshotOfFile(
    std::string_view file, std::function<void(std::string&)> edit = nullptr) {
  std::string name(file);
  std::string text = testing::Fixture("real-nodes/" + name);
  if (edit) edit(text);
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(text, name), ledger);
  return ledger.BuildSnapshot();
}

// The service's verdict letter for `node`, and its reason.
std::pair<char, std::string> ServiceVerdict(const ExtenderService& service, const Probe& probe,
                                            const std::string& node) {
  nlohmann::json request = {{"Nodes", nullptr}, {"NodeNames", {node}}};
  request["Pod"] = nlohmann::json::parse(PodJson(probe));
  ExtenderFilterResult r = service.Filter(DecodeExtenderArgs(request.dump()));
  for (const auto& [name, reason] : r.failed_nodes) {
    if (name == node) return {'F', std::string(reason)};
  }
  for (const auto& [name, reason] : r.failed_and_unresolvable_nodes) {
    if (name == node) return {'U', std::string(reason)};
  }
  bool passed = r.node_names && r.node_names->size() == 1 && r.node_names->front() == node;
  return {passed ? 'P' : '?', ""};
}

class RealNodes : public ::testing::TestWithParam<Expected> {};

TEST_P(RealNodes, reads_the_gpus_as_the_source_shows_them) {
  const Expected& want = GetParam();
  auto snapshot = SnapshotOfFile(want.file);
  ASSERT_EQ(snapshot->size(), 1u);
  const NodeState& node = *snapshot->nodes()[0];
  EXPECT_EQ(node.info.gpu.product, want.product);
  EXPECT_EQ(UnitMemoryMib(node.info, kGpuResource), want.memory_mib);

  const Policy policy(DefaultPolicySpec());
  CapacityReport capacity = ComputeCapacity(policy, *snapshot);
  EXPECT_NEAR(capacity.cluster.gpus.total, want.gpus, 0.01);
  EXPECT_EQ(capacity.cluster.gpus.shared_replicas, want.replicas);
  EXPECT_EQ(capacity.cluster.gpus.mig_slices, want.slices);
  if (want.gpus > 0) {
    std::string group = want.product.empty() ? std::string(kNoGroup) : std::string(want.product);
    EXPECT_EQ(capacity.products.count(group), 1u) << group;
  }
  // Whole-GPU pods never fit more GPUs than the node has.
  std::map<std::string, int64_t> fits;
  for (size_t s = 0; s < capacity.shapes.size(); ++s) {
    fits[capacity.shapes[s].name] = capacity.cluster.fits[s];
  }
  EXPECT_LE(fits["gpu-1"], want.gpus);
  EXPECT_LE(fits["gpu-8"] * 8, want.gpus);
}

TEST_P(RealNodes, probe_verdicts_agree_through_engine_explain_service_and_capacity) {
  const Expected& want = GetParam();
  auto snapshot = SnapshotOfFile(want.file);
  Published<ClusterSnapshot> snapshots{snapshot};
  Published<Policy> policies{std::make_shared<const Policy>(DefaultPolicySpec())};
  ExtenderService service{snapshots, policies};
  const std::shared_ptr<const Policy> held = policies.Get();
  const Policy& policy = *held;
  const NodeState& node = *snapshot->nodes()[0];
  CapacityReport capacity = ComputeCapacity(policy, *snapshot);
  ASSERT_EQ(want.verdicts.size(), std::size(kProbes));
  for (size_t i = 0; i < std::size(kProbes); ++i) {
    const Probe& probe = kProbes[i];
    SCOPED_TRACE(std::string(probe.name));
    PodInfo pod = testing::PodFromJson(PodJson(probe));

    Policy::Judgement judged = policy.Judge(pod, *snapshot);
    const NodeState* nodes[] = {&node};
    Verdict engine = judged.engine().Filter(*judged.cycle, nodes).front();
    EXPECT_EQ(Letter(engine.code), want.verdicts[i]) << engine.reason;

    Explanation explained = Explain(policy, *snapshot, pod);
    ASSERT_EQ(explained.nodes.size(), 1u);
    EXPECT_EQ(explained.nodes[0].evaluation.verdict.code, engine.code);
    EXPECT_EQ(explained.nodes[0].reason, engine.reason);

    auto [letter, reason] = ServiceVerdict(service, probe, node.info.name);
    EXPECT_EQ(letter, Letter(engine.code));
    EXPECT_EQ(reason, engine.reason);
  }
  // Capacity's one-unit shapes of nvidia.com/gpu (a GPU, a replica or a slice) fit where the
  // 1-GPU probe passes.
  int64_t one_unit = 0;
  for (size_t s = 0; s < capacity.shapes.size(); ++s) {
    const CapacityShape& shape = capacity.shapes[s];
    if (shape.resource == kGpuResource && shape.count == 1) one_unit += capacity.cluster.fits[s];
  }
  EXPECT_EQ(one_unit > 0, want.verdicts[0] == 'P');
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealNodes, ::testing::ValuesIn(kCorpus),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name(info.param.file.substr(0, info.param.file.size() - 5));
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(RealNodesCorpus, every_file_has_a_row_and_names_its_source) {
  std::set<std::string> listed;
  for (const Expected& e : kCorpus) listed.insert(std::string(e.file));
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUSCHED_TEST_FIXTURES) + "/real-nodes")) {
    std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_EQ(listed.count(file), 1u) << file;
    EXPECT_NE(testing::Fixture("real-nodes/" + file).find("# Source"), std::string::npos) << file;
  }
}

// Reasons that depend on a fact the labels do not give say "unknown", never "below".
TEST(RealNodesCorpus, unknown_memory_product_and_driver_say_unknown) {
  // The EKS node with an instance type no table knows: nothing names its GPU.
  auto snapshot = SnapshotOfFile("eks-managed-g5-no-gfd.yaml", [](std::string& text) {
    text.replace(text.find("g5.xlarge"), 9, "x9.custom");
  });
  const Policy policy(DefaultPolicySpec());
  Explanation memory = Explain(policy, *snapshot, testing::PodFromJson(PodJson(kProbes[4])));
  EXPECT_EQ(memory.nodes[0].reason, "GPU memory unknown; pod requires 20480 MiB");
  Explanation product = Explain(policy, *snapshot, testing::PodFromJson(PodJson(kProbes[5])));
  EXPECT_EQ(product.nodes[0].reason, "GPU product unknown; pod requires NVIDIA-L4");
  Explanation driver = Explain(policy, *snapshot, testing::PodFromJson(PodJson(kProbes[11])));
  EXPECT_EQ(driver.nodes[0].reason, "CUDA driver unknown; pod requires 535");
  auto t4 = SnapshotOfFile("gfd-v0.4-t4-memory-bytes.yaml");
  EXPECT_EQ(Explain(policy, *t4, testing::PodFromJson(PodJson(kProbes[11]))).nodes[0].reason,
            "CUDA driver older than 535");
  EXPECT_EQ(Explain(policy, *t4, testing::PodFromJson(PodJson(kProbes[4]))).nodes[0].reason,
            "GPU memory below 20480 MiB");
}

TEST(RealNodesCorpus, explain_says_what_a_unit_is_on_shared_and_sliced_nodes) {
  const Policy policy(DefaultPolicySpec());
  PodInfo pod = testing::PodFromJson(PodJson(kProbes[0]));
  auto gke = SnapshotOfFile("gke-l4-time-sharing.yaml");
  Explanation e = Explain(policy, *gke, pod);
  EXPECT_EQ(e.nodes[0].unit_note, "nvidia.com/gpu here is a time-slicing replica, 4 per GPU");
  EXPECT_NE(FormatExplanationText(e).find("time-slicing replica, 4 per GPU"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(FormatExplanationJson(e));
  EXPECT_EQ(j["nodes"][0]["gpuUnit"], "replica");
  EXPECT_EQ(j["nodes"][0]["unitsPerGpu"], 4);
  auto mig = SnapshotOfFile("mig-single-h100-x8-1g10gb.yaml");
  EXPECT_EQ(Explain(policy, *mig, pod).nodes[0].unit_note,
            "nvidia.com/gpu here is a MIG 1g.10gb slice, 7 per GPU");
  auto whole = SnapshotOfFile("operator-v24-a100-80gb-x8.yaml");
  EXPECT_EQ(Explain(policy, *whole, pod).nodes[0].unit_note, "");
}

TEST(RealNodesCorpus, capacity_counts_replicas_and_slices_apart_from_gpus) {
  const Policy policy(DefaultPolicySpec());
  auto ts = SnapshotOfFile("timeslice-t4-x4-replicas4.yaml");
  nlohmann::json j = nlohmann::json::parse(FormatCapacityJson(ComputeCapacity(policy, *ts)));
  EXPECT_EQ(j["cluster"]["gpus"]["total"], 4);
  EXPECT_EQ(j["cluster"]["gpus"]["sharedReplicas"], 16);
  EXPECT_EQ(j["cluster"]["fits"]["gpu-1"], 0);  // each pod would get a replica, not a GPU
  EXPECT_EQ(j["cluster"]["fits"]["gpu-8"], 0);
  EXPECT_EQ(j["cluster"]["fits"]["gpu-replica"], 16);
  auto mig = SnapshotOfFile("mig-single-a100-40gb-x1-1g5gb.yaml");
  j = nlohmann::json::parse(FormatCapacityJson(ComputeCapacity(policy, *mig)));
  EXPECT_EQ(j["cluster"]["gpus"]["total"], 1);
  EXPECT_EQ(j["cluster"]["gpus"]["migSlices"], 7);
  EXPECT_EQ(j["cluster"]["fits"]["gpu-4"], 0);
  EXPECT_EQ(j["cluster"]["fits"]["gpu-slice"], 7);
}

// A pin on the product a node reads works wherever the unpinned 1-GPU pod fits, whatever labels
// name that product (GFD, GKE, Karpenter, an EKS or AKS instance type); a pin on another product
// is refused as unresolvable.
TEST(RealNodesCorpus, a_pin_on_the_product_read_passes_and_another_is_refused) {
  const Policy policy(DefaultPolicySpec());
  size_t platform_rows = 0;
  for (const Expected& want : kCorpus) {
    if (want.verdicts[0] != 'P' || want.product.empty()) continue;
    SCOPED_TRACE(std::string(want.file));
    auto snapshot = SnapshotOfFile(want.file);
    for (const auto& [product, code] :
         {std::pair{std::string(want.product), VerdictCode::kPass},
          std::pair{std::string("NVIDIA-B200"), VerdictCode::kUnresolvable}}) {
      std::string metadata = R"("annotations":{"gpusched.io/gpu-product":")" + product + R"("},)";
      Probe pinned{"pinned", R"({"nvidia.com/gpu":"1"})", metadata, ""};
      Explanation e = Explain(policy, *snapshot, testing::PodFromJson(PodJson(pinned)));
      ASSERT_EQ(e.nodes.size(), 1u);
      EXPECT_EQ(e.nodes[0].evaluation.verdict.code, code) << product << ": " << e.nodes[0].reason;
    }
    std::string_view file = want.file;
    if (file.starts_with("gke-") || file.starts_with("eks-") || file.starts_with("karpenter-") ||
        file.starts_with("aks-")) {
      ++platform_rows;
    }
  }
  EXPECT_GE(platform_rows, 6u);  // GKE, EKS, Karpenter and AKS nodes without GFD among them
}

// The old labeller's mig-3g.21gb.* labels describe no offered resource: the 3g.20gb slices' memory
// is the size their name gives.
TEST(RealNodesCorpus, misnamed_mig_memory_label_falls_back_to_the_profile_size) {
  auto snapshot = SnapshotOfFile("mig-mixed-a100-40gb-x8-old-labeller.yaml");
  EXPECT_EQ(UnitMemoryMib(snapshot->nodes()[0]->info, "nvidia.com/mig-3g.20gb"), 20480);
  EXPECT_EQ(UnitMemoryMib(snapshot->nodes()[0]->info, "nvidia.com/mig-1g.5gb"), 4864);
}

}  // namespace
}  // namespace gpusched::real_nodes_test
