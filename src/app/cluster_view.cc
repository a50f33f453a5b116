#include "gpusched/app/cluster_view.h"

#include <thread>

#include <spdlog/spdlog.h>

#include "gpusched/app/command_line.h"
#include "gpusched/app/inventory_source.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/server/logging.h"

namespace gpusched {

void ClusterViewOptions::AddFlags(FlagSet& flags) {
  InventoryChoice::AddFlags(flags, InventoryUse::kListOnce);
  flags.AddTable(R"(
--policy FILE
    policy file; default: the built-in default policy
--sync-timeout SECONDS = 60
    with an API server: how long to wait for the first complete lists
)");
}

Validated<ClusterViewOptions> ClusterViewOptions::FromFlags(const FlagSet& flags) {
  Validated<ClusterViewOptions> out;
  ClusterViewOptions& o = out.value;
  o.inventory = out.problems.Take(InventoryChoice::FromFlags(flags));
  o.policy_path = flags.Get("policy");
  if (auto sync_timeout = ParseWholeNumber(flags.Get("sync-timeout"), 1, 3600)) {
    o.sync_timeout = std::chrono::seconds(*sync_timeout);
  } else {
    out.problems.Add("--sync-timeout takes a whole number of seconds within 1..3600");
  }
  return out;
}

ClusterView LoadClusterView(const ClusterViewOptions& options) {
  ConfigureLogging(LogFormat::kText, spdlog::level::warn);
  ClusterView view;
  view.policy = ValueOrThrow(PolicyFromFlag(options.policy_path));
  view.chosen = ReadChosenInventory(options.inventory);
  auto source = MakeInventorySource(view.chosen, view.policy->gpu_names(), LiveInventoryOptions{});
  // A live source publishes once both initial lists are in; a static one is ready at once.
  const auto deadline = std::chrono::steady_clock::now() + options.sync_timeout;
  for (Readiness r = source->readiness(); !r.ready; r = source->readiness()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw InputError("the inventory was not complete within --sync-timeout: " + r.detail);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  view.snapshot = source->snapshots().Get();
  view.description = source->description();
  return view;
}

}  // namespace gpusched
