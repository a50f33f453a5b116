// ReportOptions: what every read-only report command (capacity, why-pending, mig-advice,
// defrag-plan) reads the same way: the cluster view it reports on, whether it prints JSON, and no
// positional arguments. Declared here once, so the commands differ only in their own flags and a
// new report cannot spell --json or the view's flags differently.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

#include "gpusched/app/cluster_view.h"
#include "gpusched/cli/flags.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct ReportOptions {
  ClusterViewOptions view;
  bool json = false;

  // The flags of `gpusched <command> [flags]`, summarised by `summary`: the cluster view's and
  // --json, which prints one JSON object instead of `text_form` ("tables", "text"). The command
  // adds its own after them.
  static FlagSet Flags(const std::string& command, std::string summary, std::string_view text_form);
  // The view and --json `flags` give, with a problem for each positional argument given to
  // `command`; reads no file.
  static Validated<ReportOptions> FromFlags(const FlagSet& flags, const std::string& command);

  // Prints `report` to stdout as `json(report)` or `text(report)`, as --json chose.
  template <class Report, class Text, class Json>
  void Print(const Report& report, Text&& text, Json&& as_json) const {
    std::cout << (json ? as_json(report) : text(report));
  }
};

}  // namespace gpusched
