// InventorySource: where the extender's cluster snapshots come from, and how far along that is.
// A static source publishes one snapshot when made (an inventory file, the bundled sample cluster,
// a benchmark's synthetic cluster); a live source lists and watches the API server and keeps
// publishing until destroyed. The server application reads every source through this interface,
// so `gpusched serve`, the tests and the benchmarks assemble the service the same way.
//
// Accessors are safe to call from request threads while the source publishes.
#pragma once

#include <memory>
#include <string>

#include "gpusched/cluster/assumption_sink.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/cluster/readiness.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/util/published.h"

namespace gpusched {

struct ChosenInventory;       // app/inventory_choice.h
struct Inventory;             // inventory/static_inventory.h
struct KubeConfig;            // kube/kube_config.h
struct LiveInventoryOptions;  // kube/live_inventory.h
class SeriesWriter;           // metrics/series_writer.h

class InventorySource {
 public:
  virtual ~InventorySource() = default;

  // The snapshots the service reads; the source keeps them current for its lifetime.
  virtual const Published<ClusterSnapshot>& snapshots() const = 0;
  // Whether a complete snapshot is published, with one line for /readyz.
  virtual Readiness readiness() const = 0;
  // The source's own series for /metrics (sync state, lists, watch restarts, objects skipped),
  // written at each scrape (the server registers it with Metrics::AddCollector).
  virtual void WriteSeries(SeriesWriter& out) const = 0;
  // Where the service reports the node it expects a pod bound to; null when the source cannot
  // count such expectations (a static inventory never changes).
  virtual AssumptionSink* assumptions() = 0;
  // What is served, for the startup log line.
  virtual const std::string& description() const = 0;
};

// One snapshot, ready at once.
std::unique_ptr<InventorySource> MakeStaticSource(std::shared_ptr<const ClusterSnapshot> snapshot,
                                                  std::string description);
// The snapshot of `inventory` (nodes and pods from a file, or the bundled sample), described as
// "<origin>: N nodes, M GPU pods known (any phase)".
std::unique_ptr<InventorySource> MakeStaticSource(const Inventory& inventory,
                                                  const GpuResourceNames& gpu_names,
                                                  const std::string& origin);
// Lists and watches the nodes and pods of `config`'s API server (LiveInventory).
std::unique_ptr<InventorySource> MakeLiveSource(const KubeConfig& config,
                                                GpuResourceNames gpu_names,
                                                LiveInventoryOptions options);

// The source of `chosen` (gpusched/app/inventory_choice.h): a live one for an API server, taking
// `live_options`, a static one otherwise; its GPU resources named by `gpu_names`.
std::unique_ptr<InventorySource> MakeInventorySource(const ChosenInventory& chosen,
                                                     const GpuResourceNames& gpu_names,
                                                     const LiveInventoryOptions& live_options);

}  // namespace gpusched
