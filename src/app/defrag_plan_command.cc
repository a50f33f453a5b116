#include "gpusched/app/defrag_plan_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/kube/api_client.h"
#include "gpusched/kube/budget_list.h"
#include "gpusched/planning/defrag_plan.h"
#include "gpusched/planning/defrag_plan_format.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

// The budgets that protect the pods of the cluster `chosen` read: listed once from its API server,
// or those of its inventory (none in the bundled sample). Throws InputError when the API server
// would not list them: a plan must not take unread budgets for none.
BudgetListing ReadBudgets(const ChosenInventory& chosen) {
  if (!chosen.live()) {
    BudgetListing listing;
    listing.budgets = chosen.inventory.budgets;
    return listing;
  }
  ApiClient client(chosen.api_server);
  Validated<BudgetListing> listing = ListDisruptionBudgets(client);
  if (!listing.ok()) {
    throw InputError(listing.problems.lines()[0] +
                     " (defrag-plan lists poddisruptionbudgets of API group policy; "
                     "manifests/base/rbac.yaml grants it)");
  }
  return std::move(listing.value);
}

}  // namespace

FlagSet DefragPlanCommandOptions::Flags() {
  FlagSet flags = ReportOptions::Flags(
      "defrag-plan",
      "For each GPU pod that waits because no node takes it, but one would if a few pods there\n"
      "moved: the fewest pods to move, where each would go and the GPUs that frees, judged by\n"
      "the same engine and policy as serve; for a pod group of known size that no topology\n"
      "domain holds, the pods to move out of one domain so the whole group fits there. Only\n"
      "pods of no higher priority, whose controller (ReplicaSet, StatefulSet) has a replica on\n"
      "another node, and whose PodDisruptionBudget allows it, are moved. Reads the inventory\n"
      "(and the budgets) once; never writes to the cluster: the plan is for a person or a\n"
      "descheduler to act on.",
      "text");
  flags.AddTable(R"(
--pod NS/NAME
    plan for this waiting pod only; default: every waiting GPU pod
)");
  return flags;
}

Validated<DefragPlanCommandOptions> DefragPlanCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<DefragPlanCommandOptions> out;
  DefragPlanCommandOptions& o = out.value;
  o.report = out.problems.Take(ReportOptions::FromFlags(flags, "defrag-plan"));
  if (const std::string& pod = flags.Get("pod"); !pod.empty()) {
    const size_t slash = pod.find('/');
    if (slash == 0 || slash == std::string::npos || slash + 1 == pod.size() ||
        pod.find('/', slash + 1) != std::string::npos) {
      out.problems.Add("--pod takes NAMESPACE/NAME");
    } else {
      o.pod_namespace = pod.substr(0, slash);
      o.pod_name = pod.substr(slash + 1);
    }
  }
  return out;
}

int RunDefragPlanCommand(const std::vector<std::string>& args) {
  DefragPlanCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  return RunCatchingInputErrors([&] {
    ClusterView view = LoadClusterView(options.report.view);
    BudgetListing budgets = ReadBudgets(view.chosen);
    const GpuPods& pods = view.snapshot->gpu_pods();
    std::vector<PodInfo> chosen;
    if (!options.pod_name.empty()) {
      for (const PodInfo& pod : pods.pending) {
        if (pod.namespace_name == options.pod_namespace && pod.name == options.pod_name) {
          chosen.push_back(pod);
        }
      }
      if (chosen.empty()) {
        return Fail("--pod " + QuoteForMessage(options.pod_namespace + "/" + options.pod_name) +
                    ": no waiting GPU pod of that name in " + view.description);
      }
    }
    DefragReport report = PlanDefragmentation(
        *view.policy, *view.snapshot,
        options.pod_name.empty() ? std::span<const PodInfo>(pods.pending) : chosen, pods.bound,
        budgets.budgets);
    report.inventory = view.description;
    report.budgets_skipped = budgets.skipped;
    options.report.Print(report, FormatDefragPlanText, FormatDefragPlanJson);
    return 0;
  });
}

}  // namespace gpusched
