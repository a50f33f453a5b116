#include "gpusched/app/inventory_source.h"

#include <spdlog/spdlog.h>

#include "gpusched/app/inventory_choice.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/metrics.h"

namespace gpusched {
namespace {

class StaticSource final : public InventorySource {
 public:
  StaticSource(std::shared_ptr<const ClusterSnapshot> snapshot, std::string description)
      : snapshots_(std::move(snapshot)), description_(std::move(description)) {}

  const Published<ClusterSnapshot>& snapshots() const override { return snapshots_; }
  Readiness readiness() const override { return Readiness{true, false, description_}; }
  void ReportMetrics(MetricsState& m) const override { m.inventory_synced = true; }
  AssumptionSink* assumptions() override { return nullptr; }
  const std::string& description() const override { return description_; }

 private:
  Published<ClusterSnapshot> snapshots_;
  std::string description_;
};

class LiveSource final : public InventorySource {
 public:
  LiveSource(const KubeConfig& config, GpuResourceNames gpu_names, LiveInventoryOptions options)
      : live_(config, std::move(gpu_names), snapshots_, options),
        description_("API server " + config.server) {}

  const Published<ClusterSnapshot>& snapshots() const override { return snapshots_; }
  Readiness readiness() const override {
    InventoryStatus status = live_.Status();
    return Readiness{status.synced, status.starting, status.detail};
  }
  void ReportMetrics(MetricsState& m) const override {
    InventoryStatus status = live_.Status();
    m.inventory_synced = status.synced;
    m.inventory_age_seconds = std::chrono::duration<double>(status.age).count();
    m.inventory_lists = live_.lists();
    m.watch_restarts = live_.watch_restarts();
    auto nodes = live_.node_skips();
    auto pods = live_.pod_skips();
    m.inventory_skipped = {
        {"node", "invalid", nodes.invalid},     {"node", "malformed", nodes.malformed},
        {"node", "oversized", nodes.oversized}, {"pod", "invalid", pods.invalid},
        {"pod", "malformed", pods.malformed},   {"pod", "oversized", pods.oversized}};
    for (const auto& [kind, skips] : live_.dra_skips()) {
      m.inventory_skipped.push_back({kind, "invalid", skips.invalid});
      m.inventory_skipped.push_back({kind, "malformed", skips.malformed});
      m.inventory_skipped.push_back({kind, "oversized", skips.oversized});
    }
    m.inventory_summarised = {{"node", "extended_resources", nodes.summarised},
                              {"pod", "extended_resources", pods.summarised}};
    m.inventory_lists_abandoned = live_.lists_abandoned();
  }
  AssumptionSink* assumptions() override { return &live_; }
  const std::string& description() const override { return description_; }

 private:
  Published<ClusterSnapshot> snapshots_;  // before live_, which publishes into it
  LiveInventory live_;
  std::string description_;
};

}  // namespace

std::unique_ptr<InventorySource> MakeStaticSource(std::shared_ptr<const ClusterSnapshot> snapshot,
                                                  std::string description) {
  return std::make_unique<StaticSource>(std::move(snapshot), std::move(description));
}

std::unique_ptr<InventorySource> MakeStaticSource(const Inventory& inventory,
                                                  const GpuResourceNames& gpu_names,
                                                  const std::string& origin) {
  ClusterLedger ledger(gpu_names);
  ApplyInventory(inventory, ledger);
  std::string description = origin + ": " + std::to_string(ledger.node_count()) + " nodes, " +
                            std::to_string(ledger.gpu_pods_known()) + " GPU pods known (any phase)";
  return MakeStaticSource(ledger.BuildSnapshot(), std::move(description));
}

std::unique_ptr<InventorySource> MakeLiveSource(const KubeConfig& config,
                                                GpuResourceNames gpu_names,
                                                LiveInventoryOptions options) {
  return std::make_unique<LiveSource>(config, std::move(gpu_names), options);
}

std::unique_ptr<InventorySource> MakeInventorySource(const ChosenInventory& chosen,
                                                     const GpuResourceNames& gpu_names,
                                                     const LiveInventoryOptions& live_options) {
  if (chosen.live()) {
    const KubeConfig& kube = chosen.api_server;
    spdlog::info("watching nodes and pods at {} (context {})", kube.server, kube.context);
    return MakeLiveSource(kube, gpu_names, live_options);
  }
  if (chosen.inventory.skipped_objects > 0) {
    spdlog::info("inventory: skipped {} objects that are neither Node nor Pod",
                 chosen.inventory.skipped_objects);
  }
  return MakeStaticSource(chosen.inventory, gpu_names, chosen.origin);
}

}  // namespace gpusched
