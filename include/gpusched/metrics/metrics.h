// Metrics: what gpusched exposes on /metrics, in the Prometheus text format (prometheus-cpp).
//
// Two kinds of series. Event series (requests, latencies, rejections, decisions) are counted as
// they happen by the request threads: the Observe*/Count* calls are thread-safe and lock-free in
// prometheus-cpp's counters and histograms. State series (inventory, policy, cluster capacity,
// allocation and fragmentation) belong to the parts that hold the state: each registers a
// collector (series_writer.h) that writes them when Prometheus scrapes, so they are never stale
// and cost nothing between scrapes; this file knows none of them.
// docs/metrics.md lists every series; a test keeps the two in step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/metrics/series_writer.h"

namespace gpusched {

class Metrics {
 public:
  Metrics();
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

  // Adds a producer's series (series_writer.h) to every later scrape, after the event series and
  // those added before it. The collector must stay callable while the Metrics is scraped.
  void AddCollector(SeriesCollector collect);

  // The exposition, event series and the producers' series together.
  std::string Scrape() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched
