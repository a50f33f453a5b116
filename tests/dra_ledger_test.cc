// DRA in the inventory and in placement (issue #39): the GPUs NVIDIA's driver publishes as
// ResourceSlices count on their nodes as GPUs, allocated claims as their use, and a pod's claims
// become GPU requests every plugin judges.
#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/dra/dra_claims.h"
#include "gpusched/engine/engine.h"
#include "gpusched/explain/explain.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/dra_fixtures.h"
#include "testing/test_support.h"
#include "workload.h"

namespace gpusched::dra_ledger_test {
namespace {

using namespace testing::dra;

TEST(DraLedger, a_complete_pool_of_full_gpus_counts_on_its_node) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8)));
  auto snapshot = ledger.BuildSnapshot();
  const NodeState* node = snapshot->Find("dra-1");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->info.allocatable.units(kGpuResource), 8);
  EXPECT_EQ(node->info.gpu.product, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(node->info.gpu.memory_mib, 81920);
  EXPECT_EQ(node->info.gpu.count, 8);
  EXPECT_EQ(node->used.units(kGpuResource), 0);
  EXPECT_EQ(snapshot->gpus_by_product().at("NVIDIA-A100-SXM4-80GB"), 8);
  ASSERT_NE(snapshot->dra(), nullptr);
}

TEST(DraLedger, a_pool_counts_only_once_every_slice_of_its_newest_generation_arrived) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(4), 2, "dra-1-a"));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->info.allocatable.units(kGpuResource), 0);
  ledger.dra().Upsert(Slice("dra-1", {Gpu(4), Gpu(5), Gpu(6), Gpu(7)}, 2, "dra-1-b"));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->info.allocatable.units(kGpuResource), 8);
  // A newer generation replaces the pool: until all of it is there, nothing counts.
  DraSlice newer = Slice("dra-1", Gpus(2), 2, "dra-1-a");
  newer.pool_generation = 2;
  ledger.dra().Upsert(newer);
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->info.allocatable.units(kGpuResource), 0);
  ledger.dra().Delete<DraSliceKind>("dra-1-b");
  newer.pool_slice_count = 1;
  ledger.dra().Upsert(newer);
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->info.allocatable.units(kGpuResource), 2);
}

TEST(DraLedger, allocated_claims_use_their_devices_once_and_admin_access_uses_none) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8)));
  ledger.dra().Upsert(Allocated(Claim("train", 2), "dra-1", {"gpu-0", "gpu-1"}));
  ledger.dra().Upsert(Allocated(Claim("monitor", 1), "dra-1", {"gpu-2"}, /*admin=*/true));
  ledger.dra().Upsert(Claim("waiting", 4));  // not allocated: uses nothing
  auto snapshot = ledger.BuildSnapshot();
  EXPECT_EQ(snapshot->Find("dra-1")->used.units(kGpuResource), 2);
  EXPECT_EQ(snapshot->free_gpu_milli_by_product().at("NVIDIA-A100-SXM4-80GB"), 6000);
  ledger.dra().Delete<DraClaimKind>(DraClaimKind::Key("default", "train"));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->used.units(kGpuResource), 0);
}

TEST(DraLedger, a_partitionable_gpu_counts_once_and_is_taken_by_any_of_its_slices) {
  DraDevice whole = Gpu(0);
  whole.consumes["gpu-0-counters"]["memory"] = 80000;
  DraDevice slice = Mig(0, "1g.10gb", 0);
  slice.consumes["gpu-0-counters"]["memory"] = 10000;
  DraDevice static_mig = Mig(1, "3g.40gb", 0);  // a MIG device of a GPU not offered whole
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", {whole, slice, static_mig}));
  auto snapshot = ledger.BuildSnapshot();
  const NodeState* node = snapshot->Find("dra-1");
  EXPECT_EQ(node->info.allocatable.units(kGpuResource), 1);
  EXPECT_EQ(node->info.allocatable.units("nvidia.com/mig-3g.40gb"), 1);
  EXPECT_EQ(node->info.allocatable.units("nvidia.com/mig-1g.10gb"), 0);
  ledger.dra().Upsert(Allocated(Claim("small", 1), "dra-1", {slice.name}));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->used.units(kGpuResource), 1);
}

TEST(DraLedger, a_node_with_device_plugin_gpus_keeps_them) {
  NodeInfo node = BareNode("mixed");
  node.allocatable.Set(kGpuResource, 4000);
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(node);
  ledger.dra().Upsert(Slice("mixed", Gpus(8)));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("mixed")->info.allocatable.units(kGpuResource), 4);
}

// Issue #48: Kubernetes identifies a device by driver, pool and name; so does the count.
TEST(DraLedger, a_device_listed_by_two_slices_of_its_pool_counts_once) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8), 2, "dra-1-a"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8), 2, "dra-1-b"));
  auto snapshot = ledger.BuildSnapshot();
  EXPECT_EQ(snapshot->Find("dra-1")->info.allocatable.units(kGpuResource), 8);
  EXPECT_EQ(snapshot->gpus_by_product().at("NVIDIA-A100-SXM4-80GB"), 8);
}

TEST(DraLedger, a_device_named_twice_in_allocations_is_used_once) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8)));
  ledger.dra().Upsert(Allocated(Claim("twice", 2), "dra-1", {"gpu-0", "gpu-0"}));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->used.units(kGpuResource), 1);
  ledger.dra().Upsert(Allocated(Claim("again", 1), "dra-1", {"gpu-0"}));
  EXPECT_EQ(ledger.BuildSnapshot()->Find("dra-1")->used.units(kGpuResource), 1);
}

TEST(DraLedger, past_its_cap_a_slice_is_refused_and_counted) {
  DraLedger dra;
  DraSlice empty = Slice("n", {});
  for (size_t i = 0; i < DraSliceKind::kMax; ++i) {
    empty.name = "s-" + std::to_string(i);
    ASSERT_TRUE(dra.Upsert(empty));
  }
  EXPECT_TRUE(dra.Upsert(empty));  // one held already: replaced, not refused
  EXPECT_EQ(dra.refused().slices, 0u);
  EXPECT_FALSE(dra.Upsert(Slice("clean-node", Gpus(8))));
  EXPECT_EQ(dra.refused().slices, 1u);
  EXPECT_EQ(dra.slice_count(), DraSliceKind::kMax);
  EXPECT_EQ(dra.NodeViews().count("clean-node"), 0u);
}

// A cluster of A100 and H100 DRA nodes with NVIDIA's class, for the claims' translation.
DraCatalog TwoProducts(std::vector<DraClaim> claims) {
  DraLedger dra;
  dra.Upsert(Slice("a100-1", Gpus(8)));
  dra.Upsert(Slice("h100-1", Gpus(8, "NVIDIA H100 80GB HBM3")));
  dra.Upsert(GpuClass());
  for (auto& c : claims) dra.Upsert(std::move(c));
  return *dra.Catalog();
}

TEST(DraClaims, a_claim_becomes_gpu_requests_pinned_by_its_selectors) {
  DraCatalog catalog = TwoProducts({Claim("any", 2),
                                    Claim("h100", 4,
                                          {"device.attributes['gpu.nvidia.com'].productName == "
                                           "'NVIDIA H100 80GB HBM3'"}),
                                    Allocated(Claim("done", 2), "a100-1", {"gpu-0", "gpu-1"})});
  DraDemand any = DraDemandOf(ClaimPod("p", "any"), catalog);
  EXPECT_TRUE(any.has_claims);
  EXPECT_TRUE(any.modelled);
  EXPECT_EQ(any.requests.milli(kGpuResource), 2000);
  EXPECT_TRUE(any.products.empty());  // every product matches: not pinned

  DraDemand h100 = DraDemandOf(ClaimPod("p", "h100"), catalog);
  EXPECT_EQ(h100.requests.milli(kGpuResource), 4000);
  EXPECT_EQ(h100.products, std::vector<std::string>{"NVIDIA-H100-80GB-HBM3"});
  PodInfo judged = WithDraDemand(ClaimPod("p", "h100"), h100);
  ASSERT_NE(judged.annotation(kGpuProductAnnotation), nullptr);
  EXPECT_EQ(*judged.annotation(kGpuProductAnnotation), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(judged.requests.milli(kGpuResource), 4000);

  // Allocated already: its devices are counted on their node, it asks for nothing more.
  DraDemand done = DraDemandOf(ClaimPod("p", "done"), catalog);
  EXPECT_TRUE(done.modelled);
  EXPECT_TRUE(done.requests.empty());
}

TEST(DraClaims, what_is_not_modelled_says_why) {
  DraClaim all = Claim("all", 1);
  all.requests[0].all = true;
  DraClaim other_class = Claim("other", 1);
  other_class.requests[0].device_class = "unknown.example.com";
  DraCatalog catalog = TwoProducts({all, other_class,
                                    Claim("regex", 1,
                                          {"device.attributes['gpu.nvidia.com'].productName."
                                           "matches('H100.*')"})});
  for (const char* name : {"all", "other", "regex", "missing"}) {
    DraDemand d = DraDemandOf(ClaimPod("p", name), catalog);
    EXPECT_FALSE(d.modelled) << name;
    EXPECT_FALSE(d.unmodelled_reason.empty()) << name;
    EXPECT_TRUE(d.requests.empty()) << name;
  }
  PodInfo from_template = ClaimPod("p", "");
  from_template.claims[0].from_template = true;
  EXPECT_FALSE(DraDemandOf(from_template, catalog).modelled);
}

// Issue #48: on a cluster of full GPUs and MIG devices, NVIDIA's documented claims are modelled.
// Per device kind the class's selectors, then the request's, decide as kube-scheduler's do: the
// first false says no match (mig.nvidia.com's own on a full GPU, before `profile` is read); a kind
// a selector cannot be evaluated on counts as not matching (kube-scheduler fails on it), and is
// the answer only when no kind matches.
TEST(DraClaims, nvidias_selectors_are_modelled_on_a_mixed_cluster) {
  DraLedger dra;
  dra.Upsert(Slice("a100-1", Gpus(8)));
  dra.Upsert(Slice("h100-1", Gpus(8, "NVIDIA H100 80GB HBM3")));
  std::vector<DraDevice> migs;
  for (int i = 0; i < 7; ++i) migs.push_back(Mig(0, "1g.10gb", i));
  migs.push_back(Mig(1, "3g.40gb", 0));
  dra.Upsert(Slice("mig-1", migs));
  dra.Upsert(GpuClass());
  dra.Upsert(MigClass());
  dra.Upsert(DraDeviceClass{"any.nvidia.com", {"device.driver == 'gpu.nvidia.com'"}, ""});
  const std::string profile = "device.attributes[\"gpu.nvidia.com\"].profile == '1g.10gb'";
  dra.Upsert(OfClass(Claim("mig", 1, {profile}), "mig.nvidia.com"));
  dra.Upsert(Claim("gpu", 2));
  dra.Upsert(Claim("pin", 4,
                   {"device.attributes[\"gpu.nvidia.com\"].productName == "
                    "\"NVIDIA A100-SXM4-80GB\""}));
  dra.Upsert(Claim("type", 1, {"device.attributes['gpu.nvidia.com'].type == 'gpu'"}));
  dra.Upsert(OfClass(Claim("any-class", 1, {profile}), "any.nvidia.com"));
  dra.Upsert(Claim("profile-of-a-gpu", 1, {profile}));
  const DraCatalog& catalog = *dra.Catalog();

  DraDemand mig = DraDemandOf(ClaimPod("p", "mig"), catalog);
  EXPECT_TRUE(mig.modelled) << mig.unmodelled_reason;
  EXPECT_EQ(mig.requests.milli("nvidia.com/mig-1g.10gb"), 1000);
  EXPECT_EQ(mig.requests.milli(kGpuResource), 0);
  DraDemand gpu = DraDemandOf(ClaimPod("p", "gpu"), catalog);
  EXPECT_TRUE(gpu.modelled) << gpu.unmodelled_reason;
  EXPECT_EQ(gpu.requests.milli(kGpuResource), 2000);
  EXPECT_TRUE(gpu.products.empty());
  DraDemand pin = DraDemandOf(ClaimPod("p", "pin"), catalog);
  EXPECT_TRUE(pin.modelled) << pin.unmodelled_reason;
  EXPECT_EQ(pin.products, std::vector<std::string>{"NVIDIA-A100-SXM4-80GB"});
  EXPECT_TRUE(DraDemandOf(ClaimPod("p", "type"), catalog).modelled);
  // A class without a type: `profile` fails on the full GPUs, which kube-scheduler cannot
  // allocate from for this claim either; the MIG devices match.
  DraDemand any = DraDemandOf(ClaimPod("p", "any-class"), catalog);
  EXPECT_TRUE(any.modelled) << any.unmodelled_reason;
  EXPECT_EQ(any.requests.milli("nvidia.com/mig-1g.10gb"), 1000);
  // Every kind fails or says no: not modelled, and why.
  DraDemand none = DraDemandOf(ClaimPod("p", "profile-of-a-gpu"), catalog);
  EXPECT_FALSE(none.modelled);
  EXPECT_NE(none.unmodelled_reason.find("could not be evaluated"), std::string::npos);
}

// Issue #48: a claim past the kMaxPodClaims a pod keeps is not dropped silently.
TEST(DraClaims, claims_past_the_pods_bound_leave_it_unmodelled) {
  std::string refs;
  for (int i = 1; i <= 40; ++i) {
    refs += (i > 1 ? "," : "") + std::string(R"({"name":"c)") + std::to_string(i) +
            R"(","resourceClaimName":")" + (i == 40 ? "big" : "small") + "\"}";
  }
  PodInfo pod = DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p","namespace":"default"},)"
                                   R"("spec":{"resourceClaims":[)" +
                                   refs + R"(]}},"Nodes":null,"NodeNames":[]})")
                    .pod;
  EXPECT_EQ(pod.claims.size(), kMaxPodClaims);
  EXPECT_EQ(pod.claims_not_kept, 8u);
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("dra-1"));
  ledger.dra().Upsert(Slice("dra-1", Gpus(8)));
  ledger.dra().Upsert(GpuClass());
  ledger.dra().Upsert(Allocated(Claim("small", 1), "dra-1", {"gpu-0"}));  // asks nothing more
  ledger.dra().Upsert(Claim("big", 8));
  auto snapshot = ledger.BuildSnapshot();
  DraDemand demand = DraDemandOf(pod, *snapshot->dra());
  EXPECT_FALSE(demand.modelled);
  EXPECT_NE(demand.unmodelled_reason.find("past the first 32"), std::string::npos);
  auto policy = std::make_shared<const Policy>(DefaultPolicySpec());
  EXPECT_FALSE(policy->Judge(pod, *snapshot).cycle->unmodelled().empty());
}

// Through the engine, as the extender runs it: a 2-GPU claim goes where it keeps a whole node
// free, and a claim gpusched does not model leaves every node alike.
TEST(DraClaims, the_engine_places_a_claim_as_it_places_device_plugin_gpus) {
  ClusterLedger ledger{GpuResourceNames()};
  for (const char* n : {"dra-1", "dra-2"}) {
    ledger.UpsertNode(BareNode(n));
    ledger.dra().Upsert(Slice(n, Gpus(8)));
  }
  ledger.dra().Upsert(GpuClass());
  ledger.dra().Upsert(Allocated(Claim("first", 4), "dra-2", {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}));
  ledger.dra().Upsert(Claim("next", 2));
  DraClaim regex = Claim("regex", 2, {"device.attributes['gpu.nvidia.com'].uuid.matches('x')"});
  ledger.dra().Upsert(regex);
  auto snapshot = ledger.BuildSnapshot();
  auto policy = std::make_shared<const Policy>(DefaultPolicySpec());
  std::vector<const NodeState*> nodes = {snapshot->Find("dra-1"), snapshot->Find("dra-2")};

  PodInfo next = ClaimPod("p", "next");
  auto judged = policy->Judge(next, *snapshot);
  EXPECT_EQ(judged.cycle->gpu_demand().milli(kGpuResource), 2000);
  EXPECT_TRUE(judged.cycle->unmodelled().empty());
  EXPECT_EQ(nodes[1]->used.units(kGpuResource), 4);
  auto scores = judged.engine().Prioritize(*judged.cycle, nodes);
  EXPECT_GT(scores[1], scores[0]);  // onto the node already in use: dra-1 stays whole

  PodInfo unmodelled = ClaimPod("q", "regex");
  auto neutral = policy->Judge(unmodelled, *snapshot);
  EXPECT_FALSE(neutral.cycle->unmodelled().empty());
  EXPECT_EQ(neutral.engine().Prioritize(*neutral.cycle, nodes), (std::vector<int64_t>{0, 0}));
  auto verdicts = neutral.engine().Filter(*neutral.cycle, nodes);
  EXPECT_TRUE(verdicts[0].passed() && verdicts[1].passed());
}

// A cluster file as `kubectl get nodes,resourceslices,resourceclaims,deviceclasses -o json`
// prints it (tests/fixtures/dra/cluster.json): a DGX A100 whose eight GPUs are DRA devices, one
// held by an allocated claim, and an unallocated 2-GPU claim. Capacity counts the GPUs, explain
// judges a pod of the claim as a 2-GPU pod, and says so when it cannot model a pod's claims.
TEST(DraInventory, a_cluster_file_with_dra_objects_counts_and_explains_them) {
  Inventory inventory = ParseInventory(testing::Fixture("dra/cluster.json"), "dra/cluster.json");
  ASSERT_EQ(inventory.dra_slices.size(), 1u);
  ASSERT_EQ(inventory.dra_claims.size(), 2u);
  ASSERT_EQ(inventory.dra_classes.size(), 1u);
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(inventory, ledger);
  auto snapshot = ledger.BuildSnapshot();
  const NodeState* node = snapshot->Find("dgx-a100-01");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->info.allocatable.units(kGpuResource), 8);
  EXPECT_EQ(node->used.units(kGpuResource), 1);

  const Policy policy(DefaultPolicySpec());
  CapacityReport report = ComputeCapacity(policy, *snapshot);
  EXPECT_EQ(report.cluster.gpus.total, 8);
  EXPECT_EQ(report.cluster.gpus.allocated, 1);
  EXPECT_EQ(report.products.count("NVIDIA-A100-SXM4-80GB"), 1u);

  PodInfo train = ClaimPod("train-0", "train-a100");
  train.namespace_name = "ml";
  Explanation e = Explain(policy, *snapshot, train);
  EXPECT_EQ(e.gpu_demand.milli(kGpuResource), 2000);
  EXPECT_TRUE(e.dra_unmodelled.empty());
  ASSERT_EQ(e.ranking.size(), 1u);

  // The ledger keeps the pending pod as a 2-GPU pod, for planning (why-pending judges it again)
  // and for the observed workload; judged again it still asks for 2 GPUs, not 4.
  ledger.UpsertPod(train);
  auto with_pod = ledger.BuildSnapshot();
  ASSERT_EQ(with_pod->gpu_pods().pending.size(), 1u);
  const PodInfo& kept = with_pod->gpu_pods().pending[0];
  EXPECT_EQ(kept.requests.milli(kGpuResource), 2000);
  EXPECT_EQ(policy.Judge(kept, *with_pod).cycle->gpu_demand().milli(kGpuResource), 2000);
  EXPECT_EQ(with_pod->observed_pods(), 1);

  PodInfo missing = ClaimPod("lost-0", "no-such-claim");
  Explanation lost = Explain(policy, *snapshot, missing);
  EXPECT_NE(lost.dra_unmodelled.find("no-such-claim"), std::string::npos) << lost.dra_unmodelled;
  EXPECT_NE(FormatExplanationText(lost).find("its DRA claims are not modelled"), std::string::npos);
  EXPECT_NE(FormatExplanationJson(lost).find("\"draUnmodelled\""), std::string::npos);
}

// The benchmark cluster (bench/workload.h) with its whole-GPU nodes' GPUs published as DRA devices,
// every bound pod holding an allocated claim, and the request's pod asking through a pending
// claim: gpusched ranks it exactly as the same cluster's device-plugin GPUs and pod.
TEST(DraWorkload, gpus_published_as_dra_devices_rank_as_the_same_device_plugin_gpus) {
  auto answers = [](bench::GpuSource gpus) {
    bench::Workload w = bench::MakeWorkload(300, 0.5, 7, bench::NodeUsage::kRepeating, gpus);
    Published<ClusterSnapshot> snapshots(w.snapshot);
    Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
    ExtenderService service(snapshots, policies);
    ExtenderArgs args = DecodeExtenderArgs(w.names_request);
    return std::pair{EncodeExtenderFilterResult(service.Filter(args)),
                     EncodeHostPriorityList(service.Prioritize(args))};
  };
  auto plugin = answers(bench::GpuSource::kDevicePlugin);
  auto dra = answers(bench::GpuSource::kDra);
  EXPECT_EQ(dra.first, plugin.first);
  EXPECT_EQ(dra.second, plugin.second);
  EXPECT_NE(plugin.second.find("\"Score\":10"), std::string::npos);  // not all alike
}

}  // namespace
}  // namespace gpusched::dra_ledger_test
