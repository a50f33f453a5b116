#include "gpusched/app/report_options.h"

#include <utility>

#include "gpusched/app/command_line.h"

namespace gpusched {

FlagSet ReportOptions::Flags(const std::string& command, std::string summary,
                             std::string_view text_form) {
  FlagSet flags("gpusched " + command, "gpusched " + command + " [flags]", std::move(summary));
  ClusterViewOptions::AddFlags(flags);
  flags.Add({"json", "", "false", "print one JSON object instead of " + std::string(text_form)});
  return flags;
}

Validated<ReportOptions> ReportOptions::FromFlags(const FlagSet& flags,
                                                  const std::string& command) {
  Validated<ReportOptions> out;
  CheckNoArguments(flags, command, out.problems);
  out.value.view = out.problems.Take(ClusterViewOptions::FromFlags(flags));
  out.value.json = flags.Get("json") == "true";
  return out;
}

}  // namespace gpusched
