// ClusterView: the one-shot view of a cluster that the reporting commands (capacity and the
// planning reports) read: a policy and one complete snapshot, from an inventory file, the bundled
// sample cluster or an API server (listed once, then left). The flags that choose it are declared
// here once, so every such command offers the same ones with the same meaning.
#ifndef GPUSCHED_APP_CLUSTER_VIEW_H_
#define GPUSCHED_APP_CLUSTER_VIEW_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "gpusched/app/inventory_source.h"
#include "gpusched/cli/flags.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

struct ClusterViewOptions {
  InventoryChoice inventory;
  std::string policy_path;  // empty: the built-in default policy
  std::chrono::seconds sync_timeout{60};

  // Declares --kubeconfig, --context, --cluster, --allow-empty-inventory, --policy and
  // --sync-timeout on `flags`.
  static void AddFlags(FlagSet& flags);
  // The options `flags` give; nullopt, with `error` set, when one is invalid.
  static std::optional<ClusterViewOptions> FromFlags(const FlagSet& flags, std::string& error);
};

struct ClusterView {
  std::shared_ptr<const Policy> policy;
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::string description;  // where the snapshot came from, for report headings
};

// Loads the policy, then reads the inventory until one complete snapshot is published (at most
// options.sync_timeout). Logs go to stderr at warn level, so stdout carries only the report.
// nullopt, with `error` set (policy errors are printed as they are found), on failure.
std::optional<ClusterView> LoadClusterView(const ClusterViewOptions& options, std::string& error);

}  // namespace gpusched

#endif  // GPUSCHED_APP_CLUSTER_VIEW_H_
