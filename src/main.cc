// gpusched: the command-line entry point. It only dispatches: each command is a front door of its
// own in src/app/<name>_command.cc, whose options struct reads and validates its flags.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/app/capacity_command.h"
#include "gpusched/app/command_line.h"
#include "gpusched/app/defrag_plan_command.h"
#include "gpusched/app/explain_command.h"
#include "gpusched/app/mig_advice_command.h"
#include "gpusched/app/policy_command.h"
#include "gpusched/app/sample_cluster_command.h"
#include "gpusched/app/scheduler_config_command.h"
#include "gpusched/app/serve_command.h"
#include "gpusched/app/simulate_command.h"
#include "gpusched/app/version_command.h"
#include "gpusched/app/why_pending_command.h"

namespace gpusched {
namespace {

struct Command {
  std::string_view name;
  std::string_view summary;  // for the top-level help; lines after the first start with spaces
  int (*run)(const std::vector<std::string>& args);
};

constexpr Command kCommands[] = {
    {"serve", "run the extender HTTP service", RunServeCommand},
    {"explain", "show, node by node, how a pod would be filtered and scored", RunExplainCommand},
    {"capacity",
     "what fits now: GPUs idle and fragmented, and how many more pods of each\n"
     "                  standard shape fit, per GPU product and node pool",
     RunCapacityCommand},
    {"why-pending",
     "the GPU pods waiting for a node, grouped by shape and by why scheduling\n"
     "                  fails on the best-looking nodes, as their events say",
     RunWhyPendingCommand},
    {"mig-advice",
     "which idle MIG-capable nodes to repartition (nvidia.com/mig.config) for\n"
     "                  the MIG slices pending pods ask for, as kubectl label lines",
     RunMigAdviceCommand},
    {"defrag-plan",
     "the fewest pods to move so that a waiting GPU pod fits, and where each\n"
     "                  would go (advice only)",
     RunDefragPlanCommand},
    {"policy", "check FILE: validate a policy file and print the effective policy",
     RunPolicyCommand},
    {"sample-cluster", "print the bundled sample cluster (the default inventory of serve)",
     RunSampleClusterCommand},
    {"scheduler-config",
     "write the KubeSchedulerConfiguration that registers gpusched, for the\n"
     "                  install at hand and every GPU resource its nodes advertise",
     RunSchedulerConfigCommand},
    {"simulate",
     "packing benchmark: place a GPU trace with scheduling policies, report\n"
     "                  unallocated and fragmented GPU",
     RunSimulateCommand},
    {"version", "print the version", RunVersionCommand},
};

std::string TopHelp() {
  std::string help =
      "Usage: gpusched <command> [flags]\n"
      "\n"
      "gpusched is a GPU-aware scheduler extender for Kubernetes: kube-scheduler calls it to "
      "filter\n"
      "and rank nodes for pods that ask for NVIDIA GPUs.\n"
      "\n"
      "Commands:\n";
  for (const Command& c : kCommands) {
    std::string name(c.name);
    help += "  " + name + std::string(name.size() < 16 ? 16 - name.size() : 1, ' ');
    help += std::string(c.summary) + "\n";
  }
  return help + "\nRun 'gpusched <command> --help' for the flags of a command.\n";
}

}  // namespace
}  // namespace gpusched

int main(int argc, char** argv) {
  using namespace gpusched;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << TopHelp();
    return args.empty() ? kUsageExit : 0;
  }
  std::string name = args[0];
  args.erase(args.begin());
  if (name == "--version") name = "version";
  for (const Command& c : kCommands) {
    if (c.name == name) return c.run(args);
  }
  return Fail("unknown command \"" + name + "\"\n\n" + TopHelp());
}
