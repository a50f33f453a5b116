#include "gpusched/app/inventory_source.h"

#include <spdlog/spdlog.h>

#include "gpusched/app/inventory_choice.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/series_writer.h"

namespace gpusched {
namespace {

void WriteSynced(bool synced, SeriesWriter& out) {
  out.Gauge("gpusched_inventory_synced", "1 once the initial lists of nodes and pods are applied")
      .Add({}, synced ? 1 : 0);
}

class StaticSource final : public InventorySource {
 public:
  StaticSource(std::shared_ptr<const ClusterSnapshot> snapshot, std::string description)
      : snapshots_(std::move(snapshot)), description_(std::move(description)) {}

  const Published<ClusterSnapshot>& snapshots() const override { return snapshots_; }
  Readiness readiness() const override { return Readiness{true, false, description_}; }
  void WriteSeries(SeriesWriter& out) const override { WriteSynced(true, out); }
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
  void WriteSeries(SeriesWriter& out) const override {
    InventoryStatus status = live_.Status();
    WriteSynced(status.synced, out);
    out.Gauge(
           "gpusched_inventory_last_sync_age_seconds",
           "Seconds since the inventory last heard from the API server (list, event or bookmark)")
        .Add({}, std::chrono::duration<double>(status.age).count());
    out.Counter("gpusched_inventory_lists_total",
                "Full lists of nodes or pods made (the initial ones and every relist)")
        .Add({}, static_cast<double>(live_.lists()));
    out.Counter("gpusched_inventory_watch_lists_total",
                "Those of the full lists of nodes or pods made as one watch stream (watch-list, "
                "sendInitialEvents); the others were listed in pages")
        .Add({}, static_cast<double>(live_.watch_lists()));
    out.Counter("gpusched_inventory_watch_restarts_total",
                "Watches of nodes or pods that ended and were started again")
        .Add({}, static_cast<double>(live_.watch_restarts()));
    WriteSkips(out);
    out.Counter("gpusched_inventory_lists_abandoned_total",
                "Lists of nodes or pods given up past their page or object bound (listed again "
                "after a backoff; not ready meanwhile if no list completed)")
        .Add({}, static_cast<double>(live_.lists_abandoned()));
  }
  AssumptionSink* assumptions() override { return &live_; }
  const std::string& description() const override { return description_; }

 private:
  // Objects skipped and summarised, by kind and reason.
  void WriteSkips(SeriesWriter& out) const {
    auto skipped = out.Counter(
        "gpusched_inventory_objects_skipped_total",
        "Listed or watched objects skipped by kind and reason (invalid: gpusched cannot use it; "
        "malformed: not an object of the expected shape; oversized: longer than "
        "--max-object-bytes; dra_*: past a bound on DRA objects, docs/metrics.md); the rest "
        "went on");
    auto add = [&](std::string_view kind, const LiveInventory::Skips& skips) {
      auto count = [&](std::string_view reason, uint64_t n) {
        skipped.Add({{"kind", std::string(kind)}, {"reason", std::string(reason)}},
                    static_cast<double>(n));
      };
      count("invalid", skips.invalid);
      count("malformed", skips.malformed);
      count("oversized", skips.oversized);
      for (const auto& [reason, n] : skips.refused) count(reason, n);
    };
    const auto nodes = live_.node_skips();
    const auto pods = live_.pod_skips();
    add("node", nodes);
    add("pod", pods);
    for (const auto& [kind, skips] : live_.dra_skips()) add(kind, skips);
    const auto groups = live_.group_skips();
    for (const auto& [kind, skips] : groups) add(kind, skips);
    auto summarised =
        out.Counter("gpusched_inventory_objects_summarised_total",
                    "Listed or watched objects kept in part, by kind and reason "
                    "(extended_resources: more extended resource entries than the decoder "
                    "keeps; the rest were counted. group_size: a pod group size stated outside "
                    "1..4096, or past the 100,000 sizes kept, ignored)");
    summarised.Add({{"kind", "node"}, {"reason", "extended_resources"}},
                   static_cast<double>(nodes.summarised));
    summarised.Add({{"kind", "pod"}, {"reason", "extended_resources"}},
                   static_cast<double>(pods.summarised));
    for (const auto& [kind, skips] : groups) {
      summarised.Add({{"kind", std::string(kind)}, {"reason", "group_size"}},
                     static_cast<double>(skips.summarised));
    }
  }

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
