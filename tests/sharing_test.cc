#include "gpusched/plugins/sharing.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::sharing_test {
namespace {

using testing::FixtureNode;
using testing::MakePod;
using testing::TestCycle;
using testing::Units;

PodInfo PodWithContainer(const char* resource, int64_t per_container) {
  PodInfo p = MakePod("p", {{resource, Units(per_container)}});
  p.max_container_requests = ResourceList{{resource, Units(per_container)}};
  return p;
}

PodIntent Exclusive() {
  PodIntent i;
  i.tenancy = GpuTenancy::kExclusive;
  return i;
}

TEST(Sharing, exclusive_pods_avoid_shared_replicas) {
  SharingPlugin plugin{ReplicaRequestRules{}, Exclusive()};
  // MPS, not renamed: nvidia.com/gpu units are replicas.
  TestCycle exclusive_gpu(PodWithContainer("nvidia.com/gpu", 1), plugin);
  Verdict mps = plugin.Filter(*exclusive_gpu, FixtureNode("07-l4-x2-mps-4.json"));
  EXPECT_EQ(mps.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(mps.reason, "exclusive GPUs requested; node shares nvidia.com/gpu by mps");
  // Plain full GPUs and MIG single devices are exclusive.
  for (const char* f : {"01-t4-plain-1gpu.json", "06-h100-80gb-x8-mig-single-1g10gb.json",
                        "05-a100-80gb-x8-nomig.json"}) {
    EXPECT_TRUE(
        plugin.Filter(*TestCycle(PodWithContainer("nvidia.com/gpu", 1), plugin), FixtureNode(f))
            .passed())
        << f;
  }
  // MIG mixed slices are not shared unless their replicas say so.
  EXPECT_TRUE(plugin
                  .Filter(*TestCycle(PodWithContainer("nvidia.com/mig-1g.5gb", 1), plugin),
                          FixtureNode("04-a100-40gb-x8-mig-mixed.json"))
                  .passed());
}

TEST(Sharing, exclusive_pod_asking_for_a_shared_resource_is_contradictory) {
  SharingPlugin plugin{ReplicaRequestRules{}, Exclusive()};
  TestCycle cycle(PodWithContainer("nvidia.com/gpu.shared", 1), plugin);
  Verdict v = plugin.Filter(*cycle, FixtureNode("02-t4-timeslice-4-renamed.json"));
  EXPECT_EQ(v.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(v.reason, "exclusive GPUs requested but the pod asks for nvidia.com/gpu.shared");
}

TEST(Sharing, mps_refuses_more_than_one_replica_per_container) {
  SharingPlugin plugin{ReplicaRequestRules{}, PodIntent{}};
  NodeState mps = FixtureNode("07-l4-x2-mps-4.json");
  TestCycle two_in_one(PodWithContainer("nvidia.com/gpu", 2));
  Verdict two = plugin.Filter(*two_in_one, mps);
  EXPECT_EQ(two.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(two.reason, "device plugin allows at most 1 shared nvidia.com/gpu per container (mps)");
  EXPECT_TRUE(plugin.Filter(*TestCycle(PodWithContainer("nvidia.com/gpu", 1)), mps).passed());
  // Two containers of one unit each are fine: the rule is per container.
  PodInfo two_containers = MakePod("p", {{"nvidia.com/gpu", Units(2)}});
  two_containers.max_container_requests = ResourceList{{"nvidia.com/gpu", Units(1)}};
  EXPECT_TRUE(plugin.Filter(*TestCycle(two_containers), mps).passed());
}

TEST(Sharing, time_slicing_allows_more_than_one_unless_the_policy_says_otherwise) {
  NodeState ts = FixtureNode("02-t4-timeslice-4-renamed.json");
  TestCycle cycle(PodWithContainer("nvidia.com/gpu.shared", 2));
  EXPECT_TRUE((SharingPlugin{ReplicaRequestRules{}, PodIntent{}}.Filter(*cycle, ts).passed()));
  ReplicaRequestRules strict;
  strict.time_slicing_fail_requests_greater_than_one = true;
  Verdict v = SharingPlugin{strict, PodIntent{}}.Filter(*cycle, ts);
  EXPECT_EQ(v.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(v.reason,
            "device plugin allows at most 1 shared nvidia.com/gpu.shared per container "
            "(time-slicing)");
  ReplicaRequestRules lenient_mps;
  lenient_mps.mps_fail_requests_greater_than_one = false;
  SharingPlugin lenient{lenient_mps, PodIntent{}};
  EXPECT_TRUE(lenient
                  .Filter(*TestCycle(PodWithContainer("nvidia.com/gpu", 2)),
                          FixtureNode("07-l4-x2-mps-4.json"))
                  .passed());
}

TEST(Sharing, time_slicing_without_rename_in_the_sample_cluster) {
  // gpu-node-t4-02 time-slices its T4s and still calls the replicas nvidia.com/gpu.
  auto snapshot = testing::SampleSnapshot();
  const NodeState& node = *snapshot->Find("gpu-node-t4-02");
  SharingPlugin plugin{ReplicaRequestRules{}, Exclusive()};
  TestCycle exclusive(PodWithContainer("nvidia.com/gpu", 1), plugin, snapshot);
  Verdict v = plugin.Filter(*exclusive, node);
  EXPECT_EQ(v.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(v.reason, "exclusive GPUs requested; node shares nvidia.com/gpu by time-slicing");
  SharingPlugin any_sharing{ReplicaRequestRules{}, PodIntent{}};
  TestCycle any(PodWithContainer("nvidia.com/gpu", 2), any_sharing, snapshot);
  EXPECT_TRUE(any_sharing.Filter(*any, node).passed());
  EXPECT_TRUE(plugin.Filter(*exclusive, *snapshot->Find("gpu-node-h100-01")).passed());
}

}  // namespace
}  // namespace gpusched::sharing_test
