#include "gpusched/app/why_pending_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/app/report_signals.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/planning/why_pending.h"
#include "gpusched/planning/why_pending_format.h"

namespace gpusched {

FlagSet WhyPendingCommandOptions::Flags() {
  FlagSet flags = ReportOptions::Flags(
      "why-pending",
      "Shows the GPU pods waiting for a node (no node, not finished), grouped by shape and by\n"
      "the reason their scheduling fails on the nodes that came closest, the text their\n"
      "FailedScheduling events quote: gpusched's filter (the same engine and policy as serve),\n"
      "or kube-scheduler's own Insufficient where a node lacks the free GPU resource, on the\n"
      "nodes the pod's node selector and affinity allow. Reads the inventory once; never\n"
      "writes to the cluster.",
      "the table");
  flags.Add({"max-pods", "N", std::to_string(WhyPendingOptions{}.max_pods),
             "judge at most N pending pods, the oldest first; the others are counted by shape "
             "as not judged"});
  return flags;
}

Validated<WhyPendingCommandOptions> WhyPendingCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<WhyPendingCommandOptions> out;
  WhyPendingCommandOptions& o = out.value;
  o.report = out.problems.Take(ReportOptions::FromFlags(flags, "why-pending"));
  if (auto max_pods = ParseWholeNumber(flags.Get("max-pods"), 1, 1'000'000)) {
    o.max_pods = static_cast<size_t>(*max_pods);
  } else {
    out.problems.Add("--max-pods takes a whole number within 1..1000000");
  }
  return out;
}

int RunWhyPendingCommand(const std::vector<std::string>& args) {
  return RunReportCommand<WhyPendingCommandOptions>(
      args, "why-pending", ComputeWhyPending,
      [](const WhyPendingCommandOptions& options) {
        return WhyPendingOptions{.max_pods = options.max_pods};
      },
      [](const WhyPendingCommandOptions& options, const ClusterView&,
         const WhyPendingReport& report) {
        options.report.Print(report, FormatWhyPendingText, FormatWhyPendingJson);
        return 0;
      });
}

}  // namespace gpusched
