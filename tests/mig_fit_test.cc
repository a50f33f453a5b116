#include "gpusched/plugins/mig_fit.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::mig_fit_test {
namespace {

using testing::FixtureNode;
using testing::MakePod;
using testing::SnapshotOf;
using testing::TestCycle;
using testing::Units;

constexpr char kMixed[] = "04-a100-40gb-x8-mig-mixed.json";
constexpr char kSingle[] = "06-h100-80gb-x8-mig-single-1g10gb.json";

TEST(MigFit, profile_no_node_offers_is_unresolvable_and_lists_what_exists) {
  auto snapshot = SnapshotOf({FixtureNode(kMixed), FixtureNode(kSingle)});
  MigFitPlugin plugin;
  TestCycle cycle(MakePod("p", {{"nvidia.com/mig-3g.40gb", Units(1)}}), plugin, snapshot);
  Verdict v = plugin.Filter(*cycle, *snapshot->nodes()[0]);
  EXPECT_EQ(v.code, VerdictCode::kUnresolvable);
  EXPECT_EQ(v.reason,
            "no node offers MIG profile 3g.40gb; offered: 1g.10gb, 1g.5gb, 2g.10gb, 3g.20gb");

  TestCycle offered(MakePod("p", {{"nvidia.com/mig-2g.10gb", Units(1)}}), plugin, snapshot);
  EXPECT_TRUE(plugin.Filter(*offered, *snapshot->nodes()[1]).passed());  // counts: gpu-fit's job
}

TEST(MigFit, scores_only_pods_that_ask_for_mig) {
  MigFitPlugin plugin;
  EXPECT_TRUE(
      plugin.ScoresPod(*TestCycle(MakePod("p", {{"nvidia.com/mig-1g.5gb", Units(1)}}), plugin)));
  EXPECT_FALSE(plugin.ScoresPod(*TestCycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}), plugin)));
  PodIntent mig_product;
  mig_product.require.products = {"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"};
  MigFitPlugin for_mig_product(mig_product);
  EXPECT_TRUE(for_mig_product.ScoresPod(
      *TestCycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}), for_mig_product)));
}

TEST(MigFit, small_slices_consolidate_on_nodes_already_cut_small_and_busy) {
  MigFitPlugin plugin;
  TestCycle small(MakePod("p", {{"nvidia.com/mig-1g.5gb", Units(1)}}), plugin);
  NodeState idle = FixtureNode(kMixed);
  NodeState busy_small = FixtureNode(kMixed, {{"nvidia.com/mig-1g.5gb", Units(12)}});
  NodeState busy_large = FixtureNode(kMixed, {{"nvidia.com/mig-3g.20gb", Units(6)}});
  double s_idle = plugin.Score(*small, idle);
  double s_small = plugin.Score(*small, busy_small);
  double s_large = plugin.Score(*small, busy_large);
  // capacity in weighted slices: 16*1 + 8*2*2 + 8*3*2 = 96
  // idle: stranded 15 + 32 + 48 = 95 -> 100 * 1/96
  EXPECT_NEAR(s_idle, 100.0 / 96, 1e-9);
  // 12 small used: stranded 3 + 32 + 48 = 83 -> 100 * 13/96
  EXPECT_NEAR(s_small, 100.0 * 13 / 96, 1e-9);
  // 6 large used: stranded 15 + 32 + 12 = 59 -> 100 * 37/96: using up large slices elsewhere
  // makes this node the better home, since its large free capacity is already gone
  EXPECT_NEAR(s_large, 100.0 * 37 / 96, 1e-9);
  EXPECT_GT(s_small, s_idle);
}

TEST(MigFit, nodes_with_large_free_profiles_are_kept_for_large_requests) {
  MigFitPlugin plugin;
  TestCycle small(MakePod("p", {{"nvidia.com/mig-1g.5gb", Units(1)}}), plugin);
  // Same free small capacity; one node still has all its 3g.20gb slices free.
  NodeState keeps_large = FixtureNode(kMixed, {{"nvidia.com/mig-2g.10gb", Units(8)}});
  NodeState no_large = FixtureNode(kMixed, {{"nvidia.com/mig-3g.20gb", Units(8)}});
  EXPECT_GT(plugin.Score(*small, no_large), plugin.Score(*small, keeps_large));
}

TEST(MigFit, single_strategy_gpu_requests_use_best_fit_in_slices) {
  PodIntent mig_product;
  mig_product.require.products = {"*-MIG-1g.10gb"};
  MigFitPlugin plugin(mig_product);
  TestCycle cycle(MakePod("p", {{"nvidia.com/gpu", Units(2)}}), plugin);
  NodeState half = FixtureNode(kSingle, {{"nvidia.com/gpu", Units(28)}});
  EXPECT_NEAR(plugin.Score(*cycle, half), 100.0 * (1 - 26.0 / 56), 1e-9);
  EXPECT_NEAR(plugin.Score(*cycle, FixtureNode(kSingle)), 100.0 * (1 - 54.0 / 56), 1e-9);
}

}  // namespace
}  // namespace gpusched::mig_fit_test
