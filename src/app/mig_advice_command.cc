#include "gpusched/app/mig_advice_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/planning/mig_advice.h"
#include "gpusched/planning/mig_advice_format.h"
#include "gpusched/planning/mig_layouts.h"

namespace gpusched {

FlagSet MigAdviceCommandOptions::Flags() {
  FlagSet flags = ReportOptions::Flags(
      "mig-advice",
      "Advises which idle MIG-capable nodes the MIG manager should repartition, and into which\n"
      "nvidia.com/mig.config layout, so that the MIG slices pending pods ask for exist: the\n"
      "layout serving the most waiting slices on the fewest nodes, never taking whole GPUs a\n"
      "pending whole-GPU pod could use. Nodes under either MIG strategy: mixed (pods asking for\n"
      "nvidia.com/mig-<profile>) and single, the GPU Operator's default (pods asking for\n"
      "nvidia.com/gpu pinned to a <model>-MIG-<profile> product; one profile per node). Prints\n"
      "ready-to-run kubectl label lines, each with the demand it serves. Reads the inventory\n"
      "once; never writes to the cluster.",
      "text");
  flags.AddTable(R"(
--mig-config FILE
    the MIG manager's layouts (mig-parted v1: version, mig-configs); default: the bundled defaults
    for A100-40GB, A100-80GB and H100-80GB
)");
  return flags;
}

Validated<MigAdviceCommandOptions> MigAdviceCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<MigAdviceCommandOptions> out;
  out.value = MigAdviceCommandOptions{
      out.problems.Take(ReportOptions::FromFlags(flags, "mig-advice")), flags.Get("mig-config")};
  return out;
}

int RunMigAdviceCommand(const std::vector<std::string>& args) {
  MigAdviceCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  // The layouts first: a bad file is refused before a cluster is listed.
  Validated<MigLayouts> layouts = LoadMigLayouts(options.mig_config_path);
  if (!layouts.ok()) {
    PrintErrors(layouts.problems);
    return Fail("invalid MIG layouts " + options.mig_config_path);
  }
  return RunCatchingInputErrors([&] {
    ClusterView view = LoadClusterView(options.report.view);
    MigAdvice advice =
        AdviseMigLayouts(*view.snapshot, layouts.value,
                         PendingMigDemand(*view.policy, *view.snapshot), view.policy->gpu_names());
    advice.inventory = view.description;
    options.report.Print(advice, FormatMigAdviceText, FormatMigAdviceJson);
    return 0;
  });
}

}  // namespace gpusched
