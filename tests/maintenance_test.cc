#include "gpusched/plugins/maintenance.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

namespace gpusched::maintenance_test {
namespace {

using testing::FixtureNode;
using testing::MakePod;
using testing::TestCycle;
using testing::Units;

NodeState WithLabels(std::vector<std::pair<std::string_view, std::string_view>> labels) {
  NodeState n = testing::MakeNode("n", {{"nvidia.com/gpu", Units(8)}});
  n.info.gpu = ParseGpuLabels(labels);
  return n;
}

struct Case {
  const char* name;
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  VerdictCode code;
  const char* reason;
};

TEST(Maintenance, every_state_in_filter_mode) {
  const Case cases[] = {
      {"healthy",
       {{"nvidia.com/mig.config.state", "success"},
        {"nvidia.com/gpu-driver-upgrade-state", "upgrade-done"},
        {"nvidia.com/gpu.deploy.device-plugin", "true"}},
       VerdictCode::kPass,
       ""},
      {"no_operator_labels", {}, VerdictCode::kPass, ""},
      {"mig_pending",
       {{"nvidia.com/mig.config.state", "pending"}},
       VerdictCode::kUnschedulable,
       "MIG reconfiguration in progress"},
      {"mig_rebooting",
       {{"nvidia.com/mig.config.state", "rebooting"}},
       VerdictCode::kUnschedulable,
       "MIG reconfiguration in progress"},
      {"mig_failed",
       {{"nvidia.com/mig.config.state", "failed"}},
       VerdictCode::kUnresolvable,
       "MIG reconfiguration failed"},
      {"mig_invalid",
       {{"nvidia.com/mig.strategy", "single"},
        {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-INVALID"}},
       VerdictCode::kUnresolvable,
       "invalid MIG configuration on node"},
      {"upgrade_required",
       {{"nvidia.com/gpu-driver-upgrade-state", "upgrade-required"}},
       VerdictCode::kUnschedulable,
       "GPU driver upgrade in progress"},
      {"upgrade_draining",
       {{"nvidia.com/gpu-driver-upgrade-state", "drain-required"}},
       VerdictCode::kUnschedulable,
       "GPU driver upgrade in progress"},
      {"upgrade_failed",
       {{"nvidia.com/gpu-driver-upgrade-state", "upgrade-failed"}},
       VerdictCode::kUnresolvable,
       "GPU driver upgrade failed"},
      {"upgrade_empty_value",
       {{"nvidia.com/gpu-driver-upgrade-state", ""}},
       VerdictCode::kPass,
       ""},
      {"device_plugin_paused",
       {{"nvidia.com/gpu.deploy.device-plugin", "paused-for-mig-change"}},
       VerdictCode::kUnschedulable,
       "GPU device plugin paused"},
      {"device_plugin_off",
       {{"nvidia.com/gpu.deploy.device-plugin", "false"}},
       VerdictCode::kUnschedulable,
       "GPU device plugin paused"},
      {"driver_paused",
       {{"nvidia.com/gpu.deploy.driver", "pre-installed_paused-for-driver-upgrade"}},
       VerdictCode::kUnschedulable,
       "GPU driver paused"},
      {"driver_preinstalled",
       {{"nvidia.com/gpu.deploy.driver", "pre-installed"}},
       VerdictCode::kPass,
       ""},
  };
  MaintenancePlugin plugin{MaintenanceAction::kFilter};
  TestCycle cycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}));
  for (const auto& c : cases) {
    Verdict v = plugin.Filter(*cycle, WithLabels(c.labels));
    EXPECT_EQ(v.code, c.code) << c.name;
    EXPECT_EQ(v.reason, c.reason) << c.name;
  }
}

TEST(Maintenance, reconfiguring_fixture_is_rejected) {
  MaintenancePlugin plugin{MaintenanceAction::kFilter};
  TestCycle cycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}));
  Verdict v = plugin.Filter(*cycle, FixtureNode("08-a100-40gb-x8-mig-reconfig-pending.json"));
  EXPECT_EQ(v.code, VerdictCode::kUnschedulable);
  EXPECT_EQ(v.reason, "MIG reconfiguration in progress");
}

TEST(Maintenance, score_mode_keeps_busy_nodes_but_ranks_them_last) {
  MaintenancePlugin plugin{MaintenanceAction::kScore};
  TestCycle cycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}));
  NodeState pending = WithLabels({{"nvidia.com/mig.config.state", "pending"}});
  EXPECT_TRUE(plugin.Filter(*cycle, pending).passed());
  EXPECT_EQ(plugin.Score(*cycle, pending), 0);
  EXPECT_EQ(plugin.Score(*cycle, WithLabels({})), 100);
  // Broken nodes are rejected in either mode.
  EXPECT_EQ(plugin.Filter(*cycle, WithLabels({{"nvidia.com/mig.config.state", "failed"}})).code,
            VerdictCode::kUnresolvable);
}

TEST(Maintenance, unhealthy_gpus_lower_the_score) {
  MaintenancePlugin plugin{MaintenanceAction::kFilter};
  TestCycle cycle(MakePod("p", {{"nvidia.com/gpu", Units(1)}}));
  NodeState degraded = testing::MakeNode("n", {{"nvidia.com/gpu", Units(6)}});
  degraded.info.capacity = ResourceList{{"nvidia.com/gpu", Units(8)}};
  EXPECT_EQ(plugin.Score(*cycle, degraded), 75);
}

}  // namespace
}  // namespace gpusched::maintenance_test
