// Metrics: what gpusched exposes on /metrics, in the Prometheus text format (prometheus-cpp).
//
// Two kinds of series. Event series (requests, latencies, rejections, decisions) are counted as
// they happen by the request threads: the Observe*/Count* calls are thread-safe and lock-free in
// prometheus-cpp's counters and histograms. State series (inventory, policy, cluster capacity,
// allocation and fragmentation) are read when Prometheus scrapes, from the `StateSource` given at
// construction, so they are never stale and cost nothing between scrapes.
// docs/metrics.md lists every series; a test keeps the two in step.
#ifndef GPUSCHED_METRICS_METRICS_H_
#define GPUSCHED_METRICS_METRICS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"

namespace gpusched {

// Objects of one kind (node, pod) the inventory skipped (invalid, malformed, oversized) or
// summarised (extended_resources) for one reason.
struct SkippedObjects {
  std::string_view kind;
  std::string_view reason;
  uint64_t count = 0;
};

// One capacity gauge value: a product and a second label (state or shape).
struct CapacityGaugeValue {
  std::string product;
  std::string label;
  double value = 0;
};

// One pending-pods gauge value (capacity/why_pending.h): a shape and a reason ("" for the oldest
// wait, labelled by shape only).
struct PendingGaugeValue {
  std::string shape;
  std::string reason;
  double value = 0;
};

// The state read at scrape time. Absent parts are left out of the exposition.
struct MetricsState {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  bool inventory_synced = false;
  std::optional<double> inventory_age_seconds;  // since the last contact with the API server
  std::optional<uint64_t> inventory_lists;
  std::optional<uint64_t> watch_restarts;
  std::vector<SkippedObjects> inventory_skipped;     // empty: no live inventory
  std::vector<SkippedObjects> inventory_summarised;  // kept in part, the rest counted
  std::optional<uint64_t> inventory_lists_abandoned;
  std::string policy_digest;
  uint64_t policy_reloads_ok = 0;
  uint64_t policy_reloads_failed = 0;
  // The last background capacity result (app/capacity_worker.h); both empty until there is one.
  std::vector<CapacityGaugeValue> capacity_gpus;  // label: total, allocated, idle, fragmented
  std::vector<CapacityGaugeValue> capacity_fits;  // label: the shape's name
  // The last background why-pending report; absent until there is one (empty vectors after one:
  // nothing pending).
  bool pending_reported = false;
  std::vector<PendingGaugeValue> pending_pods;    // by shape and reason
  std::vector<PendingGaugeValue> pending_oldest;  // by shape, in seconds
};

class Metrics {
 public:
  using StateSource = std::function<MetricsState()>;
  explicit Metrics(StateSource state);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One extender call: `outcome` is ok, bad_request, not_ready or error.
  void ObserveRequest(std::string_view verb, std::string_view outcome, double seconds,
                      size_t nodes);
  // A decision made for a pod under a policy profile.
  void CountDecision(std::string_view verb, std::string_view profile);
  // `count` nodes rejected by `plugin`; `verdict_class` is unschedulable or unresolvable.
  void CountRejections(std::string_view plugin, std::string_view verdict_class, uint64_t count);
  // A request answered 503 because requests in flight held the request budget
  // (--max-inflight-body-bytes).
  void CountRequestBudgetRejection();
  // An answer replaced by a 503 because the answers waiting for their readers and the requests in
  // flight held the budget.
  void CountDroppedAnswer();
  // A filter or prioritize call for a pod whose DRA claims gpusched does not model
  // (Cycle::unmodelled): every node passed and scored alike.
  void CountDraUnmodelled();
  // A GET of /metrics or a report answered 503 because as many were being built as the listener
  // allows beside its probes.
  void CountBusyReport();

  // The exposition, event series and state series together.
  std::string Scrape() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched

#endif  // GPUSCHED_METRICS_METRICS_H_
