// `gpusched explain`: how one pod would be filtered and scored on every node
// (gpusched/explain/explain.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/app/cluster_view.h"
#include "gpusched/cli/flags.h"
#include "gpusched/explain/explain.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct ExplainCommandOptions {
  ClusterViewOptions view;
  std::string pod_path;
  bool json = false;
  std::optional<BlendSettings> blend;

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<ExplainCommandOptions> FromFlags(const FlagSet& flags);
};

int RunExplainCommand(const std::vector<std::string>& args);

}  // namespace gpusched
