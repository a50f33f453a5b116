#include "gpusched/app/inventory_choice.h"

namespace gpusched {
namespace {

// The help texts of the inventory flags, as serve and the one-shot commands word them.
struct InventoryHelp {
  const char* kubeconfig;
  const char* cluster;
  const char* allow_empty;
};

InventoryHelp HelpFor(InventoryUse use) {
  if (use == InventoryUse::kWatch) {
    return {
        "watch nodes and pods through the API server of this kubeconfig (inside a pod the "
        "service account is used without this flag)",
        "static inventory instead of the API server: Nodes and Pods as YAML or JSON (a "
        "v1.List, or kubectl get nodes,pods -A -o yaml output); default without an API "
        "server: the bundled sample cluster",
        "start even when --cluster holds no Node (otherwise an error, as a wrong file is the "
        "likelier cause)"};
  }
  return {
      "list nodes and pods once through the API server of this kubeconfig (inside a pod the "
      "service account is used without this flag)",
      "inventory (as for serve); default without an API server: the bundled sample cluster",
      "accept a --cluster holding no Node"};
}

}  // namespace

void InventoryChoice::AddFlags(FlagSet& flags, InventoryUse use) {
  InventoryHelp help = HelpFor(use);
  flags.Add({"kubeconfig", "FILE", "", help.kubeconfig})
      .Add({"context", "NAME", "", "kubeconfig context; default: its current-context"})
      .Add({"cluster", "FILE", "", help.cluster})
      .Add({"allow-empty-inventory", "", "false", help.allow_empty});
}

Validated<InventoryChoice> InventoryChoice::FromFlags(const FlagSet& flags) {
  Validated<InventoryChoice> out;
  out.value = InventoryChoice{flags.Get("cluster"), flags.Get("kubeconfig"), flags.Get("context"),
                              flags.Get("allow-empty-inventory") == "true"};
  if (!out.value.cluster.empty() && !out.value.kubeconfig.empty()) {
    out.problems.Add("--cluster and --kubeconfig exclude each other");
  }
  return out;
}

InventoryKind InventoryChoice::Kind(bool in_cluster) const {
  if (!cluster.empty()) return InventoryKind::kFile;
  if (!kubeconfig.empty()) return InventoryKind::kKubeconfig;
  return in_cluster ? InventoryKind::kInCluster : InventoryKind::kSample;
}

ChosenInventory ReadChosenInventory(const InventoryChoice& choice) {
  ChosenInventory chosen;
  chosen.kind = choice.Kind(RunningInCluster());
  switch (chosen.kind) {
    case InventoryKind::kKubeconfig:
      chosen.api_server = LoadKubeconfig(choice.kubeconfig, choice.context);
      break;
    case InventoryKind::kInCluster:
      chosen.api_server = InClusterConfig();
      break;
    case InventoryKind::kFile:
    case InventoryKind::kSample:
      chosen.inventory = LoadInventoryOrSample(choice.cluster, choice.allow_empty);
      chosen.origin = choice.cluster.empty() ? "bundled sample cluster" : choice.cluster;
      break;
  }
  return chosen;
}

}  // namespace gpusched
