// The node affinity written for a pod's hard GPU rules admits exactly the nodes gpusched's own
// filters (gpu-match, sharing) accept: on every real node of the corpus, the node fixtures, and a
// planned node of every GKE accelerator, Karpenter GPU name and Azure GPU size the tables know, for
// product pins, memory floors and exclusivity alone and combined.
#include <filesystem>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gpusched/admission/hard_rule_affinity.h"
#include "gpusched/admission/pod_mutator.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/plugins/gpu_match.h"
#include "gpusched/plugins/maintenance.h"
#include "gpusched/plugins/sharing.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::hard_rule_affinity_test {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct LabeledNode {
  std::string name;
  Labels labels;
  YAML::Node object;  // the Node as written (fixtures), or null (planned nodes)
};

// The Node objects of a YAML or JSON file (a Node, a List, or several documents).
void CollectNodes(const YAML::Node& doc, std::vector<LabeledNode>& out) {
  if (!doc.IsMap()) return;
  if (doc["items"]) {
    for (const auto& item : doc["items"]) CollectNodes(item, out);
    return;
  }
  if (!doc["kind"] || doc["kind"].as<std::string>() != "Node") return;
  LabeledNode n{doc["metadata"]["name"].as<std::string>(), {}, YAML::Clone(doc)};
  for (const auto& kv : doc["metadata"]["labels"]) {
    n.labels.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
  }
  out.push_back(std::move(n));
}

// A planned node: its labels, one GPU (as a node group template offers it).
YAML::Node PlannedObject(const LabeledNode& n) {
  YAML::Node node;
  node["kind"] = "Node";
  node["apiVersion"] = "v1";
  node["metadata"]["name"] = n.name;
  for (const auto& [k, v] : n.labels) node["metadata"]["labels"][k] = v;
  node["status"]["capacity"]["nvidia.com/gpu"] = "1";
  node["status"]["allocatable"]["nvidia.com/gpu"] = "1";
  return node;
}

// Nodes an autoscaler plans: only their platform's labels.
std::vector<LabeledNode> PlannedNodes() {
  std::vector<LabeledNode> out;
  int i = 0;
  auto add = [&](Labels labels) { out.push_back({"planned-" + std::to_string(i++), labels, {}}); };
  for (std::string_view a : KnownGkeAccelerators()) {
    add({{"cloud.google.com/gke-accelerator", std::string(a)}});
    add({{"cloud.google.com/gke-accelerator", std::string(a)},
         {"cloud.google.com/gke-gpu-partition-size", "1g.5gb"}});
    add({{"cloud.google.com/gke-accelerator", std::string(a)},
         {"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
         {"cloud.google.com/gke-max-shared-clients-per-gpu", "2"}});
  }
  for (std::string_view prefix : {"karpenter.k8s.aws/", "eks.amazonaws.com/"}) {
    for (std::string_view name : KnownKarpenterGpuNames()) {
      Labels base = {{std::string(prefix) + "instance-gpu-name", std::string(name)},
                     {std::string(prefix) + "instance-gpu-manufacturer", "nvidia"},
                     {std::string(prefix) + "instance-gpu-count", "1"}};
      add(base);
      for (std::string_view memory : {"16384", "24576", "32768", "40960", "46068", "81920"}) {
        Labels with = base;
        with.emplace_back(std::string(prefix) + "instance-gpu-memory", std::string(memory));
        add(with);
      }
    }
  }
  for (std::string_view size : KnownAzureGpuSizes()) {
    add({{"kubernetes.azure.com/accelerator", "nvidia"},
         {"node.kubernetes.io/instance-type", std::string(size)}});
  }
  for (std::string_view type : KnownEc2GpuInstanceTypes()) {
    add({{"node.kubernetes.io/instance-type", std::string(type)}});
  }
  for (LabeledNode& n : out) n.object = PlannedObject(n);
  return out;
}

std::vector<LabeledNode> AllNodes() {
  std::vector<LabeledNode> out;
  for (std::string_view dir : {"real-nodes", "nodes"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(testing::FixturePath(std::string(dir)))) {
      std::string file = entry.path().filename().string();
      if (!file.ends_with(".yaml") && !file.ends_with(".json")) continue;
      for (const YAML::Node& doc : YAML::LoadAll(testing::Fixture(std::string(dir) + "/" + file))) {
        CollectNodes(doc, out);
      }
    }
  }
  for (LabeledNode& n : PlannedNodes()) out.push_back(std::move(n));
  return out;
}

// Whether gpusched takes `node` as shared only because it offers more GPU units than it has GPUs
// (no label says so): no node label tells an autoscaler that (docs/operations.md).
bool SharedByCountOnly(const NodeState& node) {
  return node.info.gpu.sharing == SharingStrategy::kUnknown &&
         SharingOf(node.info, kGpuResource) != SharingStrategy::kNone &&
         node.info.gpu.replicas.value_or(1) <= 1;
}

const HardRuleOptions kNoMaintenance{AffinityPlatforms{}, MaintenanceRule::kNone};

struct Rule {
  std::string_view name;
  std::string_view annotations;  // JSON members
};

constexpr Rule kRules[] = {
    {"maintenance-only", R"("other":"x")"},
    {"product-L4", R"("gpusched.io/gpu-product":"NVIDIA-L4")"},
    {"product-T4", R"("gpusched.io/gpu-product":"Tesla-T4")"},
    {"product-A100-any", R"("gpusched.io/gpu-product":"NVIDIA-A100-*")"},
    {"product-H100-or-H200", R"("gpusched.io/gpu-product":"NVIDIA-H100*,NVIDIA-H200")"},
    {"product-A10G", R"("gpusched.io/gpu-product":"NVIDIA-A10G")"},
    {"product-V100-32", R"("gpusched.io/gpu-product":"Tesla-V100-SXM2-32GB")"},
    {"memory-16Gi", R"("gpusched.io/min-gpu-memory":"16Gi")"},
    {"memory-20Gi", R"("gpusched.io/min-gpu-memory":"20Gi")"},
    {"memory-40Gi", R"("gpusched.io/min-gpu-memory":"40Gi")"},
    {"memory-60Gi", R"("gpusched.io/min-gpu-memory":"60Gi")"},
    {"exclusive", R"("gpusched.io/sharing":"exclusive")"},
    {"A100-80Gi",
     R"("gpusched.io/gpu-product":"NVIDIA-A100-*","gpusched.io/min-gpu-memory":"80Gi")"},
    {"exclusive-20Gi", R"("gpusched.io/sharing":"exclusive","gpusched.io/min-gpu-memory":"20Gi")"},
};

PodInfo RulePod(const Rule& rule) {
  return testing::PodFromJson(std::string(R"({"metadata":{"name":"p","namespace":"n","uid":"u",)") +
                              R"("annotations":{)" + std::string(rule.annotations) +
                              R"(}},"spec":{"containers":[{"name":"c","resources":{"limits":)" +
                              R"({"nvidia.com/gpu":"1"}}}]}})");
}

TEST(HardRuleAffinity,
     admits_exactly_the_nodes_gpusched_accepts_on_every_fixture_and_planned_node) {
  std::vector<LabeledNode> nodes = AllNodes();
  ASSERT_GT(nodes.size(), 150u);
  YAML::Node list;
  list["kind"] = "List";
  list["apiVersion"] = "v1";
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = "n" + std::to_string(i) + "-" + nodes[i].name;
    nodes[i].object["metadata"]["name"] = nodes[i].name;
    list["items"].push_back(nodes[i].object);
  }
  YAML::Emitter text;
  text << list;
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(text.c_str(), "nodes"), ledger);
  auto snapshot = ledger.BuildSnapshot();
  ASSERT_EQ(snapshot->size(), nodes.size());
  LabelVocabulary vocabulary = VocabularyOf(*snapshot);
  const Policy policy(DefaultPolicySpec());
  size_t admitted = 0, checked = 0;
  for (const Rule& rule : kRules) {
    SCOPED_TRACE(std::string(rule.name));
    PodInfo pod = RulePod(rule);
    Policy::Judgement judged = policy.Judge(pod, *snapshot);
    const PodIntent intent = ParsePodIntent(pod, PodIntent{});
    GpuMatchPlugin match(CostTable{}, PodIntent{});
    SharingPlugin sharing(ReplicaRequestRules{}, PodIntent{});
    MaintenancePlugin maintenance(MaintenanceAction::kFilter);
    RuleAffinity affinity =
        AffinityForHardRules(intent, kGpuResource, vocabulary, HardRuleOptions{});
    ASSERT_FALSE(affinity.alternatives.empty());
    EXPECT_TRUE(affinity.left_out.empty());
    for (const LabeledNode& n : nodes) {
      const NodeState& node = *snapshot->Find(n.name);
      bool accepted = match.Filter(*judged.cycle, node).code == VerdictCode::kPass &&
                      sharing.Filter(*judged.cycle, node).code == VerdictCode::kPass &&
                      maintenance.Filter(*judged.cycle, node).code == VerdictCode::kPass;
      std::vector<std::pair<std::string_view, std::string_view>> labels(n.labels.begin(),
                                                                        n.labels.end());
      bool admits = AdmitsNode(affinity.alternatives, labels);
      if (intent.tenancy == GpuTenancy::kExclusive && SharedByCountOnly(node)) {
        EXPECT_TRUE(admits || !accepted) << n.name;  // looser there, never stricter
      } else {
        EXPECT_EQ(admits, accepted) << n.name << " product=" << node.info.gpu.product;
      }
      admitted += admits;
      ++checked;
    }
  }
  // Neither everything nor nothing: the rules tell nodes apart.
  EXPECT_GT(admitted, checked / 20);
  EXPECT_LT(admitted, checked * 2 / 3);
}

TEST(HardRuleAffinity, platforms_left_out_are_not_named) {
  PodIntent intent;
  intent.require.products = {"NVIDIA-L4"};
  RuleAffinity all = AffinityForHardRules(intent, kGpuResource, {}, kNoMaintenance);
  RuleAffinity gfd_only = AffinityForHardRules(
      intent, kGpuResource, {},
      HardRuleOptions{AffinityPlatforms{false, false, false, false}, MaintenanceRule::kNone});
  ASSERT_EQ(gfd_only.alternatives.size(), 1u);
  EXPECT_GT(all.alternatives.size(), 1u);
  EXPECT_EQ(gfd_only.alternatives[0][0].key, "nvidia.com/gpu.product");
  EXPECT_TRUE(AdmitsNode(all.alternatives, {{"cloud.google.com/gke-accelerator", "nvidia-l4"}}));
  EXPECT_FALSE(
      AdmitsNode(gfd_only.alternatives, {{"cloud.google.com/gke-accelerator", "nvidia-l4"}}));
}

TEST(HardRuleAffinity, rules_no_label_carries_are_listed_and_unsatisfiable_ones_flagged) {
  PodIntent intent;
  intent.require.families = {"hopper"};
  intent.require.min_cuda_driver = Version::Parse("535");
  RuleAffinity r = AffinityForHardRules(intent, kGpuResource, {}, kNoMaintenance);
  EXPECT_TRUE(r.alternatives.empty());
  EXPECT_EQ(r.left_out.size(), 2u);
  EXPECT_FALSE(r.unsatisfiable);

  PodIntent exclusive;
  exclusive.tenancy = GpuTenancy::kExclusive;
  EXPECT_TRUE(
      AffinityForHardRules(exclusive, kSharedGpuResource, {}, kNoMaintenance).unsatisfiable);

  PodIntent nothing;
  nothing.require.products = {"NO-SUCH-GPU-*"};
  EXPECT_TRUE(AffinityForHardRules(nothing, kGpuResource, {}, kNoMaintenance).unsatisfiable);

  PodIntent mig_memory;
  mig_memory.require.min_memory_mib = 20480;
  RuleAffinity m = AffinityForHardRules(mig_memory, "nvidia.com/mig-3g.20gb", {}, kNoMaintenance);
  EXPECT_TRUE(m.alternatives.empty());
  ASSERT_EQ(m.left_out.size(), 1u);
}

TEST(HardRuleAffinity, a_wildcard_pin_names_the_products_seen_on_the_cluster) {
  PodIntent intent;
  intent.require.products = {"NVIDIA-GB300*"};
  EXPECT_TRUE(AffinityForHardRules(intent, kGpuResource, {}, kNoMaintenance).unsatisfiable);
  LabelVocabulary seen;
  seen.products = {"NVIDIA-GB300-288GB"};
  RuleAffinity r = AffinityForHardRules(intent, kGpuResource, seen, kNoMaintenance);
  ASSERT_FALSE(r.alternatives.empty());
  EXPECT_TRUE(AdmitsNode(r.alternatives, {{"nvidia.com/gpu.product", "NVIDIA-GB300-288GB"}}));
  // A pin without wildcards is its own spelling, even if no node has it yet.
  intent.require.products = {"NVIDIA-GB300-288GB"};
  r = AffinityForHardRules(intent, kGpuResource, {}, kNoMaintenance);
  EXPECT_TRUE(AdmitsNode(r.alternatives, {{"nvidia.com/gpu.product", "NVIDIA-GB300-288GB"}}));
  EXPECT_TRUE(
      AdmitsNode(r.alternatives, {{"nvidia.com/gpu.product", "NVIDIA-GB300-288GB-SHARED"}}));
}

}  // namespace
}  // namespace gpusched::hard_rule_affinity_test
