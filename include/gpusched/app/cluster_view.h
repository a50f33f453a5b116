// ClusterView: the one-shot view of a cluster that the one-shot commands (explain, capacity and the
// planning reports) read: a policy and one complete snapshot, from an inventory file, the bundled
// sample cluster or an API server (listed once, then left). The flags that choose it are declared
// here once (the inventory's own in gpusched/app/inventory_choice.h, shared with serve), so every
// such command offers the same ones with the same meaning.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "gpusched/app/inventory_choice.h"
#include "gpusched/cli/flags.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/validated.h"

namespace gpusched {

struct ClusterViewOptions {
  InventoryChoice inventory;
  std::string policy_path;  // empty: the built-in default policy
  std::chrono::seconds sync_timeout{60};

  // Declares --kubeconfig, --context, --cluster, --allow-empty-inventory, --policy and
  // --sync-timeout on `flags`.
  static void AddFlags(FlagSet& flags);
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<ClusterViewOptions> FromFlags(const FlagSet& flags);
};

struct ClusterView {
  std::shared_ptr<const Policy> policy;
  std::shared_ptr<const ClusterSnapshot> snapshot;
  std::string description;  // where the snapshot came from, for report headings
  ChosenInventory chosen;   // what was read: a command that needs more of it reads nothing twice
};

// Loads the policy, then reads the inventory until one complete snapshot is published (at most
// options.sync_timeout). Logs go to stderr at warn level, so stdout carries only the report.
// Throws InputError on failure (a policy file's, every problem it has).
ClusterView LoadClusterView(const ClusterViewOptions& options);

}  // namespace gpusched
