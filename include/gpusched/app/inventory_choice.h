// InventoryChoice: where a command reads the cluster from, as its flags say. The flags are declared
// here once (--kubeconfig, --context, --cluster, --allow-empty-inventory) for serve, which watches
// the cluster, and for the one-shot commands, which list it once; and the choice between them is
// made here once, by InventoryChoice::Kind:
//
//   --cluster FILE          the static inventory of FILE
//   --kubeconfig FILE       the API server of FILE (--context: which of its contexts)
//   neither, inside a pod   the API server of the pod's service account
//   neither, elsewhere      the bundled sample cluster
//
// FromFlags reads the flags only (no file is opened); ReadChosenInventory then reads what they
// name, the one place that does, and a wrong path is reported there.
#pragma once

#include <string>

#include "gpusched/cli/flags.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/util/validated.h"

namespace gpusched {

// How a command uses the inventory, which its flags' help texts say.
enum class InventoryUse {
  kWatch,     // serve: watch the API server, or serve a static inventory
  kListOnce,  // the one-shot commands: one complete snapshot, then left
};

enum class InventoryKind { kFile, kKubeconfig, kInCluster, kSample };

struct InventoryChoice {
  std::string cluster;       // a static inventory file
  std::string kubeconfig;    // an API server
  std::string context;       // of kubeconfig; empty: its current-context
  bool allow_empty = false;  // accept a static inventory holding no Node

  // Declares --kubeconfig, --context, --cluster and --allow-empty-inventory on `flags`.
  static void AddFlags(FlagSet& flags, InventoryUse use);
  // The choice `flags` give; a problem when --cluster and --kubeconfig are both given.
  static Validated<InventoryChoice> FromFlags(const FlagSet& flags);

  // Which inventory the choice names (the table above; the file, should both --cluster and
  // --kubeconfig be set, which FromFlags refuses). `in_cluster` is RunningInCluster()
  // (kube/kube_config.h), given by the caller so that the choice itself reads nothing.
  InventoryKind Kind(bool in_cluster) const;
};

// What a choice names, read: the API server's configuration, or the static inventory.
struct ChosenInventory {
  InventoryKind kind = InventoryKind::kSample;
  KubeConfig api_server;  // kKubeconfig and kInCluster
  Inventory inventory;    // kFile and kSample
  std::string origin;     // kFile and kSample: the file, or "bundled sample cluster"

  bool live() const {
    return kind == InventoryKind::kKubeconfig || kind == InventoryKind::kInCluster;
  }
};

// Reads what `choice` names; throws InputError (a kubeconfig's or an inventory file's) when it
// cannot be read.
ChosenInventory ReadChosenInventory(const InventoryChoice& choice);

}  // namespace gpusched
