#include "gpusched/app/explain_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/packing/in_tree_scores.h"

namespace gpusched {

FlagSet ExplainCommandOptions::Flags() {
  FlagSet flags(
      "gpusched explain", "gpusched explain --pod POD.yaml [flags]",
      "Shows how gpusched would place a pod: for every node of the inventory, the verdict,\n"
      "the reason, each plugin's score and weight, the extender score; then the ranking.\n"
      "It runs the same engine and policy as serve.");
  flags.AddTable(R"(
--pod FILE
    the pod, YAML or JSON (a v1.Pod; apiVersion and kind may be left out, as in the Pod of an
    extender request)
)");
  ClusterViewOptions::AddFlags(flags);
  flags.AddTable(R"(
--output FORMAT = text
    text or json
--blend MODE
    also show what kube-scheduler adds: least-allocated (its default profile) or most-allocated
    NodeResourcesFit, BalancedAllocation and the extender's score x weight x 10, and the node it
    would pick
--extender-weight W = 5
    the extender's weight with --blend (the README's 5)
)");
  return flags;
}

Validated<ExplainCommandOptions> ExplainCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<ExplainCommandOptions> out;
  ExplainCommandOptions& o = out.value;
  o.pod_path = flags.Get("pod");
  if (o.pod_path.empty()) out.problems.Add("explain needs --pod FILE");
  CheckNoArguments(flags, "explain", out.problems);
  if (const std::string& mode = flags.Get("blend"); !mode.empty()) {
    auto in_tree = ParseBlendMode(mode);
    if (!in_tree) out.problems.Add("--blend must be least-allocated or most-allocated");
    auto weight = ParseWholeNumber(flags.Get("extender-weight"), 1, 100);
    if (!weight) out.problems.Add("--extender-weight takes a whole number within 1..100");
    if (in_tree && weight) o.blend = BlendSettings{*in_tree, static_cast<double>(*weight)};
  }
  const std::string& output = flags.Get("output");
  if (output != "text" && output != "json") out.problems.Add("--output must be text or json");
  o.json = output == "json";
  o.view = out.problems.Take(ClusterViewOptions::FromFlags(flags));
  return out;
}

int RunExplainCommand(const std::vector<std::string>& args) {
  ExplainCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  return RunCatchingInputErrors([&] {
    PodInfo pod = LoadPodFile(options.pod_path);
    ClusterView view = LoadClusterView(options.view);
    Explanation e = Explain(*view.policy, *view.snapshot, pod, options.blend);
    std::cout << (options.json ? FormatExplanationJson(e) : FormatExplanationText(e));
    return 0;
  });
}

}  // namespace gpusched
