// The commands' front doors (gpusched/app/*_command.h): FromFlags reports every problem of the
// flags at once and reads no file; the inventory flags are one reader shared by serve and every
// one-shot command, and the inventory choice is made by InventoryChoice::Kind alone.
#include <gtest/gtest.h>

#include "gpusched/app/capacity_command.h"
#include "gpusched/app/defrag_plan_command.h"
#include "gpusched/app/explain_command.h"
#include "gpusched/app/inventory_choice.h"
#include "gpusched/app/mig_advice_command.h"
#include "gpusched/app/report_signals.h"
#include "gpusched/app/serve_command.h"
#include "gpusched/app/simulate_command.h"
#include "gpusched/app/why_pending_command.h"
#include "gpusched/util/file_text.h"

namespace gpusched::front_doors_test {
namespace {

// `Options`'s flags parsed from `args`, then read.
template <class Options>
Validated<Options> Read(const std::vector<std::string>& args) {
  FlagSet flags = Options::Flags();
  EXPECT_TRUE(flags.Parse(args).empty());
  return Options::FromFlags(flags);
}

TEST(FrontDoors, several_bad_flags_are_reported_together_in_flag_order) {
  auto capacity = Read<CapacityCommandOptions>(
      {"--sync-timeout", "0", "--pool-label", "team", "--cluster", "c", "--kubeconfig", "k"});
  EXPECT_EQ(capacity.problems.lines(),
            (std::vector<std::string>{
                "--cluster and --kubeconfig exclude each other",
                "--sync-timeout takes a whole number of seconds within 1..3600",
                "--pool-label team: gpusched keeps only the nvidia.com/ labels of a node (not "
                "nvidia.com/gfd.timestamp); name one of those, such as nvidia.com/gpu.family"}));
  auto serve = Read<ServeCommandOptions>({"--listen", "nowhere", "--threads", "0", "--log-format",
                                          "xml", "--dra-inventory", "maybe", "extra"});
  EXPECT_EQ(serve.problems.lines(),
            (std::vector<std::string>{
                "serve takes no arguments: extra", "--log-format must be text or json",
                "--listen must be HOST:PORT, got \"nowhere\"",
                "--threads and --keep-alive-timeout take positive whole numbers",
                "--dra-inventory must be true or false"}));
  auto simulate = Read<SimulateCommandOptions>({"--tune", "0", "--jobs", "0", "--blend", "x"});
  EXPECT_EQ(simulate.problems.lines().size(), 4u);  // no inputs, jobs, tune, blend
}

TEST(FrontDoors, valid_flags_read_without_problems) {
  EXPECT_TRUE(Read<ServeCommandOptions>({}).ok());
  EXPECT_TRUE(Read<CapacityCommandOptions>({"--json"}).ok());
  EXPECT_TRUE(Read<WhyPendingCommandOptions>({"--max-pods", "5"}).ok());
  EXPECT_TRUE(Read<MigAdviceCommandOptions>({}).ok());
  EXPECT_TRUE(Read<DefragPlanCommandOptions>({"--pod", "ns/p"}).ok());
  EXPECT_TRUE(Read<ExplainCommandOptions>({"--pod", "p.yaml", "--blend", "most-allocated"}).ok());
  EXPECT_TRUE(Read<SimulateCommandOptions>({"--scenario", "s.yaml"}).ok());
}

// The rule: FromFlags reads the flags only. A file they name is read when the command runs, so a
// path that does not exist is no problem of the flags; it is reported where the inventory (or the
// pod, the trace, the policy) is read.
TEST(FrontDoors, reading_the_flags_opens_no_file) {
  const std::string missing = "/nonexistent/gpusched-front-doors/cluster.yaml";
  auto capacity = Read<CapacityCommandOptions>({"--cluster", missing, "--policy", missing});
  ASSERT_TRUE(capacity.ok());
  EXPECT_EQ(capacity.value.report.view.inventory.cluster, missing);
  EXPECT_TRUE(
      Read<ServeCommandOptions>({"--cluster", missing, "--tls-cert", missing, "--tls-key", missing})
          .ok());
  EXPECT_TRUE(Read<ExplainCommandOptions>({"--pod", missing, "--cluster", missing}).ok());
  // Policy files are resolved when the simulation runs, not while its flags are read.
  auto simulate = Read<SimulateCommandOptions>({"--scenario", missing, "--policy", missing});
  ASSERT_TRUE(simulate.ok());
  EXPECT_EQ(simulate.value.policy_names, std::vector<std::string>{missing});
  try {
    ReadChosenInventory(capacity.value.report.view.inventory);
    FAIL() << "a missing --cluster file was read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), missing + " does not exist");
  }
}

// The report commands read their view, --json and "no arguments" with one reader: each says the
// same about a positional argument in its own name, and --json means the same to each.
TEST(FrontDoors, every_report_command_reads_its_view_and_json_alike) {
  auto check = [](auto read, const std::string& command) {
    auto plain = read(std::vector<std::string>{"--sync-timeout", "7"});
    ASSERT_TRUE(plain.ok()) << command;
    EXPECT_FALSE(plain.value.report.json) << command;
    EXPECT_EQ(plain.value.report.view.sync_timeout, std::chrono::seconds(7)) << command;
    auto json = read(std::vector<std::string>{"--json", "extra"});
    EXPECT_TRUE(json.value.report.json) << command;
    EXPECT_EQ(json.problems.lines(),
              std::vector<std::string>{command + " takes no arguments: extra"});
  };
  check([](auto args) { return Read<CapacityCommandOptions>(args); }, "capacity");
  check([](auto args) { return Read<WhyPendingCommandOptions>(args); }, "why-pending");
  check([](auto args) { return Read<MigAdviceCommandOptions>(args); }, "mig-advice");
  check([](auto args) { return Read<DefragPlanCommandOptions>(args); }, "defrag-plan");
}

// Serve and every one-shot command read the inventory flags with one reader: each refuses the
// same contradiction in the same words, and each declares the same four flags.
TEST(FrontDoors, every_command_reads_the_inventory_flags_alike) {
  const std::vector<std::string> both = {"--cluster", "c.yaml", "--kubeconfig", "k.yaml"};
  const std::string refusal = "--cluster and --kubeconfig exclude each other";
  auto refuses = [&](const Problems& problems) {
    const auto& lines = problems.lines();
    return std::find(lines.begin(), lines.end(), refusal) != lines.end();
  };
  EXPECT_TRUE(refuses(Read<ServeCommandOptions>(both).problems));
  EXPECT_TRUE(refuses(Read<CapacityCommandOptions>(both).problems));
  EXPECT_TRUE(refuses(Read<WhyPendingCommandOptions>(both).problems));
  EXPECT_TRUE(refuses(Read<MigAdviceCommandOptions>(both).problems));
  EXPECT_TRUE(refuses(Read<DefragPlanCommandOptions>(both).problems));
  std::vector<std::string> explain = both;
  explain.insert(explain.end(), {"--pod", "p.yaml"});
  EXPECT_TRUE(refuses(Read<ExplainCommandOptions>(explain).problems));
  for (const FlagSet& flags : {ServeCommandOptions::Flags(), CapacityCommandOptions::Flags(),
                               WhyPendingCommandOptions::Flags(), MigAdviceCommandOptions::Flags(),
                               DefragPlanCommandOptions::Flags(), ExplainCommandOptions::Flags()}) {
    for (const char* name : {"kubeconfig", "context", "cluster", "allow-empty-inventory"}) {
      auto declared = std::count_if(flags.specs().begin(), flags.specs().end(),
                                    [&](const FlagSpec& s) { return s.name == name; });
      EXPECT_EQ(declared, 1) << name;
    }
  }
}

TEST(FrontDoors, the_inventory_choice_is_file_then_kubeconfig_then_the_pod_then_the_sample) {
  auto kind = [](std::string cluster, std::string kubeconfig, bool in_cluster) {
    return InventoryChoice{std::move(cluster), std::move(kubeconfig), "", false}.Kind(in_cluster);
  };
  EXPECT_EQ(kind("c.yaml", "", false), InventoryKind::kFile);
  EXPECT_EQ(kind("c.yaml", "", true), InventoryKind::kFile);  // a file wins inside a pod too
  EXPECT_EQ(kind("", "k.yaml", false), InventoryKind::kKubeconfig);
  EXPECT_EQ(kind("", "k.yaml", true), InventoryKind::kKubeconfig);
  EXPECT_EQ(kind("", "", true), InventoryKind::kInCluster);
  EXPECT_EQ(kind("", "", false), InventoryKind::kSample);
}

TEST(FrontDoors, the_sample_is_read_as_a_static_inventory) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");  // never the in-cluster path
  ChosenInventory chosen = ReadChosenInventory(InventoryChoice{});
  EXPECT_EQ(chosen.kind, InventoryKind::kSample);
  EXPECT_FALSE(chosen.live());
  EXPECT_EQ(chosen.origin, "bundled sample cluster");
  EXPECT_FALSE(chosen.inventory.nodes.empty());
}

// The options of a report command made up for the test: the cluster view's flags alone.
struct ProbeOptions {
  ReportOptions report;
  static FlagSet Flags() { return ReportOptions::Flags("probe", "A test's report.", "text"); }
  static Validated<ProbeOptions> FromFlags(const FlagSet& flags) {
    Validated<ProbeOptions> out;
    out.value.report = out.problems.Take(ReportOptions::FromFlags(flags, "probe"));
    return out;
  }
};
struct ProbeSettings {
  const Cancellation* cancellation = nullptr;
};
struct ProbeReport {
  bool cancelled = false;
  std::string inventory;
};
ProbeSettings NoSettings(const ProbeOptions&) { return {}; }

// Every report command's door (capacity, why-pending): a report a signal cancelled is said so
// with kCancelledExit and never printed; another names the inventory and exits as its printer
// says; bad flags never reach the computation.
TEST(FrontDoors, a_report_command_prints_what_was_not_cancelled) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");  // the bundled sample, never the in-cluster path
  for (bool cancelled : {true, false}) {
    bool computed = false;
    std::string printed_inventory;
    ::testing::internal::CaptureStderr();
    int code = RunReportCommand<ProbeOptions>(
        {}, "probe",
        [&](const Policy&, const ClusterSnapshot& snapshot, const ProbeSettings& settings) {
          computed = true;
          EXPECT_GT(snapshot.size(), 0u);
          EXPECT_NE(settings.cancellation, nullptr);
          return ProbeReport{cancelled, ""};
        },
        NoSettings,
        [&](const ProbeOptions&, const ClusterView&, const ProbeReport& report) {
          printed_inventory = report.inventory;
          return 7;
        });
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(computed);
    if (cancelled) {
      EXPECT_EQ(code, kCancelledExit);
      EXPECT_EQ(err, "gpusched: probe: cancelled by a signal\n");
      EXPECT_TRUE(printed_inventory.empty());
    } else {
      EXPECT_EQ(code, 7) << err;
      EXPECT_FALSE(printed_inventory.empty());
    }
  }
  ::testing::internal::CaptureStderr();
  bool computed = false;
  int code = RunReportCommand<ProbeOptions>(
      {"--sync-timeout", "never"}, "probe",
      [&](const Policy&, const ClusterSnapshot&, const ProbeSettings&) {
        computed = true;
        return ProbeReport{};
      },
      NoSettings, [](const ProbeOptions&, const ClusterView&, const ProbeReport&) { return 0; });
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kUsageExit);
  EXPECT_FALSE(computed);
}

}  // namespace
}  // namespace gpusched::front_doors_test
