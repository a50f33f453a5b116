// DRA at a real cluster's size and under hostile claims (issue #48): claims shared between
// catalogs and bounded by bytes, selectors compiled once, per-pod selector work bounded, a claim
// named twice counted once, devices kept compactly with one whole device per kind, kinds capped.
#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/dra/dra_claims.h"
#include "gpusched/dra/dra_ledger.h"
#include "gpusched/dra/dra_stored_slice.h"
#include "testing/dra_fixtures.h"

namespace gpusched::dra_bounds_test {
namespace {

using namespace testing::dra;

// A selector of about `bytes` bytes that is true on A100s: a chain of ||.
std::string LongSelector(size_t bytes) {
  std::string s = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'";
  while (s.size() + 80 < bytes) {
    s += " || device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'";
  }
  return s;
}

// The claim of issue #48's attack: 32 requests of 4 selectors of 9.9 KB, 1.2 MiB.
DraClaim HugeClaim(const std::string& name) {
  DraClaim c = Claim(name, 1);
  DraDeviceRequest r = c.requests[0];
  r.selectors.assign(4, LongSelector(9900));
  c.requests.assign(32, r);
  for (size_t i = 0; i < c.requests.size(); ++i) c.requests[i].name = "r" + std::to_string(i);
  return c;
}

DraLedger TwoProductLedger() {
  DraLedger dra;
  dra.Upsert(Slice("a100-1", Gpus(8)));
  dra.Upsert(Slice("h100-1", Gpus(8, "NVIDIA H100 80GB HBM3")));
  dra.Upsert(GpuClass());
  return dra;
}

TEST(DraBounds, catalogs_share_claims_instead_of_copying_them) {
  DraLedger dra = TwoProductLedger();
  for (int i = 0; i < 500; ++i) dra.Upsert(Claim("c" + std::to_string(i), 1));
  auto first = dra.Catalog();
  dra.Upsert(Claim("c-new", 2));
  auto second = dra.Catalog();
  ASSERT_NE(first, second);
  // The same immutable entry in both, compiled once.
  const DraClaimEntry* a = first->FindClaim("default", "c7");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, second->FindClaim("default", "c7"));
  EXPECT_EQ(first->FindClaim("default", "c-new"), nullptr);  // the old catalog did not change
  ASSERT_NE(second->FindClaim("default", "c-new"), nullptr);
  // A changed claim is a new entry in new catalogs; the old catalog keeps the old one.
  dra.Upsert(Claim("c7", 4));
  auto third = dra.Catalog();
  EXPECT_EQ(first->FindClaim("default", "c7"), a);
  EXPECT_EQ(a->claim.requests[0].count, 1);
  EXPECT_EQ(third->FindClaim("default", "c7")->claim.requests[0].count, 4);
  dra.Delete<DraClaimKind>(DraClaimKind::Key("default", "c7"));
  EXPECT_EQ(dra.Catalog()->FindClaim("default", "c7"), nullptr);
  EXPECT_EQ(third->FindClaim("default", "c7")->claim.requests[0].count, 4);
  EXPECT_EQ(dra.claim_count(), 500u);
}

TEST(DraBounds, selectors_are_compiled_when_their_claim_and_class_arrive) {
  DraLedger dra = TwoProductLedger();
  dra.Upsert(Claim("pin", 1, {"device.attributes['gpu.nvidia.com'].productName == 'x'"}));
  const DraClaimEntry* entry = dra.Catalog()->FindClaim("default", "pin");
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->requests.size(), 1u);
  EXPECT_EQ(entry->requests[0].selectors.size(), 1u);
  EXPECT_GT(entry->requests[0].cost, 0u);
  EXPECT_TRUE(entry->requests[0].selectors[0].supported());
  const DraClassEntry* device_class = dra.Catalog()->FindClass("gpu.nvidia.com");
  ASSERT_NE(device_class, nullptr);
  EXPECT_EQ(device_class->selectors.selectors.size(), 1u);
}

TEST(DraBounds, a_claim_past_the_byte_bound_keeps_only_what_counting_its_devices_reads) {
  DraLedger dra = TwoProductLedger();
  DraClaim huge = HugeClaim("huge");
  EXPECT_GT(DraClaimBytes(huge), kMaxDraClaimBytes);
  dra.Upsert(huge);
  dra.Upsert(Allocated(HugeClaim("huge-held"), "a100-1", {"gpu-0", "gpu-1"}));
  EXPECT_EQ(dra.refused().claim_bytes, 2u);
  EXPECT_LT(dra.claim_bytes(), 2 * kMaxDraClaimBytes);
  const DraClaimEntry* entry = dra.Catalog()->FindClaim("default", "huge");
  ASSERT_NE(entry, nullptr);
  EXPECT_TRUE(entry->claim.requests.empty());
  EXPECT_NE(entry->requests_dropped.find("bytes"), std::string::npos);
  // A pod naming it is unmodelled, and says why.
  DraDemand d = DraDemandOf(ClaimPod("p", "huge"), *dra.Catalog());
  EXPECT_FALSE(d.modelled);
  EXPECT_NE(d.unmodelled_reason.find("bytes"), std::string::npos) << d.unmodelled_reason;
  // What an allocated one holds still counts as used.
  EXPECT_EQ(dra.NodeViews().at("a100-1").used.units(kGpuResource), 2);
  // Deleting them gives their bytes back.
  dra.Delete<DraClaimKind>(DraClaimKind::Key("default", "huge"));
  dra.Delete<DraClaimKind>(DraClaimKind::Key("default", "huge-held"));
  EXPECT_EQ(dra.claim_bytes(), 0u);
}

TEST(DraBounds, past_the_claims_byte_budget_a_claim_is_kept_without_requests) {
  auto fits = DraClaimEntry::Make(Claim("fits", 1), kMaxDraClaimBytesTotal);
  EXPECT_TRUE(fits->requests_dropped.empty());
  auto late = DraClaimEntry::Make(Claim("late", 1), 100);
  EXPECT_NE(late->requests_dropped.find("budget"), std::string::npos) << late->requests_dropped;
  EXPECT_TRUE(late->claim.requests.empty());
  // The ledger's list path counts them as the watch path does.
  DraLedger dra = TwoProductLedger();
  dra.Replace<DraClaimKind>({fits, late});
  EXPECT_EQ(dra.refused().claim_bytes, 1u);
  EXPECT_EQ(dra.claim_count(), 2u);
  EXPECT_EQ(dra.claim_bytes(), fits->bytes + late->bytes);
}

TEST(DraBounds, a_claim_named_twice_is_judged_and_counted_once) {
  DraLedger dra = TwoProductLedger();
  dra.Upsert(Claim("two", 2));
  PodInfo pod = ClaimPod("p", "two");
  for (int i = 0; i < 31; ++i) pod.claims.push_back(PodClaimRef{"again", "two", false});
  DraDemand d = DraDemandOf(pod, *dra.Catalog());
  EXPECT_TRUE(d.modelled) << d.unmodelled_reason;
  EXPECT_EQ(d.requests.milli(kGpuResource), 2000);
}

TEST(DraBounds, a_pod_whose_claims_take_too_long_to_judge_is_unmodelled_at_once) {
  DraLedger dra = TwoProductLedger();
  for (int i = 0; i < 20; ++i) {
    dra.Upsert(Slice("other-" + std::to_string(i), Gpus(1, "product " + std::to_string(i))));
  }
  // Each claim under the byte bound (32 requests of a 600-byte selector), each judged on 22
  // kinds: past the work bound once the pod names many of them.
  PodInfo pod = ClaimPod("p", "heavy-0");
  pod.claims.clear();
  for (int i = 0; i < 32; ++i) {
    DraClaim c = Claim("heavy-" + std::to_string(i), 1, {LongSelector(600)});
    DraDeviceRequest r = c.requests[0];
    c.requests.assign(32, r);
    ASSERT_LT(DraClaimBytes(c), kMaxDraClaimBytes);
    dra.Upsert(c);
    pod.claims.push_back(PodClaimRef{"c" + std::to_string(i), c.name, false});
  }
  EXPECT_EQ(dra.refused().claim_bytes, 0u);
  DraDemand d = DraDemandOf(pod, *dra.Catalog());
  EXPECT_FALSE(d.modelled);
  EXPECT_NE(d.unmodelled_reason.find("selector steps"), std::string::npos) << d.unmodelled_reason;
  // One of them alone is judged.
  DraDemand one = DraDemandOf(ClaimPod("p", "heavy-0"), *dra.Catalog());
  EXPECT_TRUE(one.modelled) << one.unmodelled_reason;
  EXPECT_EQ(one.requests.milli(kGpuResource), 32000);
}

TEST(DraBounds, devices_keep_one_whole_device_per_kind) {
  DraKindInterner kinds;
  DraStoredSlice a = StoreSlice(Slice("a100-1", Gpus(8)), kinds);
  DraStoredSlice b = StoreSlice(Slice("a100-2", Gpus(8)), kinds);
  DraStoredSlice h = StoreSlice(Slice("h100-1", Gpus(8, "NVIDIA H100 80GB HBM3")), kinds);
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[3].name, "gpu-3");
  // Every A100 shares the first one's device, uuid and all; the H100s are a kind of their own.
  EXPECT_EQ(a.devices[3].kind, b.devices[5].kind);
  EXPECT_EQ(a.devices[3].kind->attributes.at("gpu.nvidia.com/uuid").text, "GPU-0");
  EXPECT_EQ(a.devices[3].kind->name, "gpu-0");  // named in unmodelled reasons
  EXPECT_NE(a.devices[0].kind, h.devices[0].kind);
  EXPECT_EQ(kinds.size(), 2u);
  // Counter sets: names only, each once per slice.
  std::vector<DraDevice> devices = {Gpu(0), Mig(0, "1g.10gb", 0), Mig(0, "1g.10gb", 1)};
  for (auto& d : devices) d.consumes["gpu-0-counter-set"]["memory"] = 1000;
  DraStoredSlice p = StoreSlice(Slice("part-1", devices), kinds);
  EXPECT_EQ(p.set_names, std::vector<std::string>{"gpu-0-counter-set"});
  EXPECT_EQ(p.SetsOf(p.devices[2]), std::vector<std::string_view>{"gpu-0-counter-set"});
  EXPECT_TRUE(p.devices[1].kind->consumes.empty());
  EXPECT_EQ(p.devices[1].kind, p.devices[2].kind);
}

TEST(DraBounds, past_the_kinds_cap_claims_are_unmodelled_and_the_cap_counted) {
  DraLedger dra;
  dra.Upsert(GpuClass());
  for (size_t i = 0; i <= kMaxDeviceKinds; ++i) {
    dra.Upsert(Slice("n" + std::to_string(i), Gpus(1, "product " + std::to_string(i))));
  }
  dra.Upsert(Claim("one", 1));
  EXPECT_TRUE(dra.kinds_cut());
  EXPECT_EQ(dra.kinds().size(), kMaxDeviceKinds);
  EXPECT_GE(dra.refused().kinds, 1u);
  DraDemand d = DraDemandOf(ClaimPod("p", "one"), *dra.Catalog());
  EXPECT_FALSE(d.modelled);
  EXPECT_NE(d.unmodelled_reason.find("kinds"), std::string::npos) << d.unmodelled_reason;
  // The GPUs still count on their nodes.
  EXPECT_EQ(dra.NodeViews().size(), kMaxDeviceKinds + 1);
  EXPECT_EQ(dra.device_count(), kMaxDeviceKinds + 1);
}

// A pod listed before its claim (the pod list finished first, as at every start) is judged again
// once the claim arrives: it counts as a GPU pod, on its node and in the observed workload.
TEST(DraBounds, a_pod_seen_before_its_claim_is_judged_again_when_the_claim_arrives) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(BareNode("a100-1"));
  ledger.dra().Upsert(Slice("a100-1", Gpus(8)));
  ledger.dra().Upsert(GpuClass());
  PodInfo bound = ClaimPod("bound", "two");
  bound.node_name = "a100-1";
  PodInfo pending = ClaimPod("pending", "one");
  ledger.UpsertPod(bound);
  ledger.UpsertPod(pending);
  auto before = ledger.BuildSnapshot();
  EXPECT_EQ(before->Find("a100-1")->gpu_pod_count, 0);
  EXPECT_TRUE(before->gpu_pods().pending.empty());
  EXPECT_EQ(before->observed_pods(), 0);

  ledger.dra().Upsert(Claim("two", 2));
  ledger.dra().Upsert(Claim("one", 1));
  auto after = ledger.BuildSnapshot();
  EXPECT_EQ(after->Find("a100-1")->gpu_pod_count, 1);
  EXPECT_EQ(after->Find("a100-1")->used.units(kGpuResource), 2);
  ASSERT_EQ(after->gpu_pods().pending.size(), 1u);
  EXPECT_EQ(after->gpu_pods().pending[0].requests.milli(kGpuResource), 1000);
  EXPECT_EQ(after->observed_pods(), 2);
  // Judged once more, nothing changes: each pod observed once.
  ledger.dra().Upsert(Claim("other", 1));
  EXPECT_EQ(ledger.BuildSnapshot()->observed_pods(), 2);
  // A deleted pod is no longer waited for.
  PodInfo gone = ClaimPod("gone", "later");
  ledger.UpsertPod(gone);
  ledger.DeletePod(PodKey(gone));
  ledger.dra().Upsert(Claim("later", 1));
  EXPECT_EQ(ledger.BuildSnapshot()->gpu_pods().pending.size(), 1u);
}

}  // namespace
}  // namespace gpusched::dra_bounds_test
