// `gpusched serve`: the extender service (gpusched/app/server_app.h) with the options its flags
// give, until SIGTERM or SIGINT.
#pragma once

#include <string>
#include <vector>

#include <spdlog/common.h>

#include "gpusched/app/inventory_choice.h"
#include "gpusched/app/server_app.h"
#include "gpusched/cli/flags.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/server/logging.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct ServeCommandOptions {
  ServerAppOptions app;
  InventoryChoice inventory;
  LiveInventoryOptions live;
  // --placeholders: make placeholder pods (app/placeholder_controller.h); the Lease's namespace.
  bool placeholders = false;
  std::string placeholder_namespace;
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file. May log a warning
  // for a setting it adjusts (a body limit over the in-flight budget).
  static Validated<ServeCommandOptions> FromFlags(const FlagSet& flags);
};

int RunServeCommand(const std::vector<std::string>& args);

}  // namespace gpusched
