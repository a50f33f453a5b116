#include "gpusched/app/mig_advice_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/planning/mig_advice.h"
#include "gpusched/planning/mig_advice_format.h"
#include "gpusched/planning/mig_layouts.h"

namespace gpusched {

FlagSet MigAdviceCommandOptions::Flags() {
  FlagSet flags(
      "gpusched mig-advice", "gpusched mig-advice [flags]",
      "Advises which idle MIG-capable nodes the MIG manager should repartition, and into which\n"
      "nvidia.com/mig.config layout, so that the MIG slices pending pods ask for exist: the\n"
      "layout serving the most waiting slices on the fewest nodes, never taking whole GPUs a\n"
      "pending whole-GPU pod could use. Nodes under either MIG strategy: mixed (pods asking for\n"
      "nvidia.com/mig-<profile>) and single, the GPU Operator's default (pods asking for\n"
      "nvidia.com/gpu pinned to a <model>-MIG-<profile> product; one profile per node). Prints\n"
      "ready-to-run kubectl label lines, each with the demand it serves. Reads the inventory\n"
      "once; never writes to the cluster.");
  ClusterViewOptions::AddFlags(flags);
  flags
      .Add({"mig-config", "FILE", "",
            "the MIG manager's layouts (mig-parted v1: version, mig-configs); default: the "
            "bundled defaults for A100-40GB, A100-80GB and H100-80GB"})
      .Add({"json", "", "false", "print one JSON object instead of text"});
  return flags;
}

Validated<MigAdviceCommandOptions> MigAdviceCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<MigAdviceCommandOptions> out;
  CheckNoArguments(flags, "mig-advice", out.problems);
  out.value = MigAdviceCommandOptions{out.problems.Take(ClusterViewOptions::FromFlags(flags)),
                                      flags.Get("mig-config"), flags.Get("json") == "true"};
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
    ClusterView view = LoadClusterView(options.view);
    MigAdvice advice =
        AdviseMigLayouts(*view.snapshot, layouts.value,
                         PendingMigDemand(*view.policy, *view.snapshot), view.policy->gpu_names());
    advice.inventory = view.description;
    std::cout << (options.json ? FormatMigAdviceJson(advice) : FormatMigAdviceText(advice));
    return 0;
  });
}

}  // namespace gpusched
