#include "gpusched/app/cluster_view.h"

#include <thread>

#include <spdlog/spdlog.h>

#include "gpusched/app/command_line.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/server/logging.h"

namespace gpusched {

void ClusterViewOptions::AddFlags(FlagSet& flags) {
  flags
      .Add({"kubeconfig", "FILE", "",
            "list nodes and pods once through the API server of this kubeconfig (inside a pod "
            "the service account is used without this flag)"})
      .Add({"context", "NAME", "", "kubeconfig context; default: its current-context"})
      .Add({"cluster", "FILE", "",
            "inventory (as for serve); default without an API server: the bundled sample "
            "cluster"})
      .Add({"allow-empty-inventory", "", "false", "accept a --cluster holding no Node"})
      .Add({"policy", "FILE", "", "policy file; default: the built-in default policy"})
      .Add({"sync-timeout", "SECONDS", "60",
            "with an API server: how long to wait for the first complete lists"});
}

std::optional<ClusterViewOptions> ClusterViewOptions::FromFlags(const FlagSet& flags,
                                                                std::string& error) {
  ClusterViewOptions o;
  o.inventory = InventoryChoice{flags.Get("cluster"), flags.Get("kubeconfig"), flags.Get("context"),
                                flags.Get("allow-empty-inventory") == "true"};
  o.policy_path = flags.Get("policy");
  auto sync_timeout = ParseWholeNumber(flags.Get("sync-timeout"), 1, 3600);
  if (!sync_timeout) {
    error = "--sync-timeout takes a whole number of seconds within 1..3600";
    return std::nullopt;
  }
  o.sync_timeout = std::chrono::seconds(*sync_timeout);
  return o;
}

std::optional<ClusterView> LoadClusterView(const ClusterViewOptions& options, std::string& error) {
  ConfigureLogging(LogFormat::kText, spdlog::level::warn);
  ClusterView view;
  view.policy = PolicyFromFlag(options.policy_path);
  if (!view.policy) {
    error = "invalid policy " + options.policy_path;
    return std::nullopt;
  }
  auto source =
      MakeInventorySource(options.inventory, GpuResourceNames(view.policy->spec().gpu_resources),
                          LiveInventoryOptions{}, error);
  if (!source) return std::nullopt;
  // A live source publishes once both initial lists are in; a static one is ready at once.
  const auto deadline = std::chrono::steady_clock::now() + options.sync_timeout;
  for (Readiness r = source->readiness(); !r.ready; r = source->readiness()) {
    if (std::chrono::steady_clock::now() > deadline) {
      error = "the inventory was not complete within --sync-timeout: " + r.detail;
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  view.snapshot = source->snapshots().Get();
  view.description = source->description();
  return view;
}

}  // namespace gpusched
