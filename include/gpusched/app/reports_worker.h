// ReportsWorker: the capacity report (gpusched/planning/capacity.h) and the why-pending report
// (gpusched/planning/why_pending.h) of the serving snapshot, computed on a thread of its own and
// kept for GET /capacity and GET /why-pending (on the reports listener, --reports-listen, else the
// ops listener) and for the gpusched_capacity_* and gpusched_pending_* gauges. A report takes
// seconds on a large cluster, so neither a verb's thread nor a request's thread ever computes one:
// they read the last result. The two reports are computed one after the other from the same
// snapshot and policy; one that fails keeps its last good result and does not hold back the other.
//
// The thread (a PeriodicThread) looks at the published snapshot and policy every `poll` and
// computes new reports only when the snapshot's generation or the policy's digest changed since
// the last ones, and at most once per `min_interval` (`gpusched serve --report-interval`, default
// kReportInterval), so a busy cluster whose snapshot changes many times a second costs one pair
// of reports per interval. Destroying the worker cancels a report in progress (Cancellation,
// checked between nodes and between pods), so a shutdown waits for one node's or one pod's
// judgement, not for a whole report.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/metrics/series_writer.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/report_rows.h"
#include "gpusched/planning/why_pending.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_transport.h"
#include "gpusched/util/cancellation.h"
#include "gpusched/util/periodic.h"
#include "gpusched/util/published.h"

namespace gpusched {

// The default of `gpusched serve --report-interval`: at most one pair of reports per interval.
inline constexpr std::chrono::seconds kReportInterval{30};

struct CapacityResult {
  uint64_t generation = 0;  // of the snapshot it describes
  std::string policy_digest;
  std::chrono::steady_clock::time_point computed_at;
  double compute_seconds = 0;
  CapacityReport report;
  std::string json;  // FormatCapacityJson(report), as `gpusched capacity --json` prints it
  std::vector<GaugeRow> gauge_gpus;
  std::vector<GaugeRow> gauge_fits;
};

struct WhyPendingResult {
  uint64_t generation = 0;  // of the snapshot it describes
  std::chrono::steady_clock::time_point computed_at;
  double compute_seconds = 0;
  WhyPendingReport report;
  std::string json;  // FormatWhyPendingJson(report), as `gpusched why-pending --json` prints it
  std::vector<GaugeRow> gauge_pods;
  std::vector<GaugeRow> gauge_oldest;  // at report.now_unix; scrapes add the age
};

struct ReportsWorkerOptions {
  std::chrono::milliseconds min_interval = kReportInterval;
  std::chrono::milliseconds poll{250};
  std::string description;  // CapacityReport::inventory
};

// Where the worker keeps one kind of report: the last one, and how many it has published.
template <class Result>
struct ReportSlot {
  Published<Result> latest;
  std::atomic<uint64_t> computed{0};
};

class ReportsWorker {
 public:
  // Starts the thread; `ready` says when the snapshot is complete enough to describe.
  ReportsWorker(const Published<ClusterSnapshot>& snapshots, const Published<Policy>& policies,
                std::function<bool()> ready, ReportsWorkerOptions options);
  ~ReportsWorker();  // stops and joins
  ReportsWorker(const ReportsWorker&) = delete;
  ReportsWorker& operator=(const ReportsWorker&) = delete;

  // The last result; null before the first. Cheap: one reference-count increment.
  std::shared_ptr<const CapacityResult> LatestCapacity() const { return capacity_.latest.Get(); }
  std::shared_ptr<const WhyPendingResult> LatestWhyPending() const { return pending_.latest.Get(); }
  // Reports of each kind computed and published so far, each counted once it is out (for tests);
  // a failed or cancelled report is not counted.
  uint64_t capacity_reports() const { return capacity_.computed.load(); }
  uint64_t why_pending_reports() const { return pending_.computed.load(); }
  // GET /capacity: the last result's JSON with "snapshotGeneration" and "ageSeconds" in front,
  // or 503 with a one-line JSON error before the first.
  HttpResponse ServeCapacity() const;
  // GET /why-pending: the same for the last why-pending report.
  HttpResponse ServeWhyPending() const;
  // The gpusched_capacity_* and gpusched_pending_* gauges of the last results (none before the
  // first), the oldest waits as of now; the server registers it with Metrics::AddCollector.
  void WriteSeries(SeriesWriter& out) const;

 private:
  // One look at the published snapshot and policy: both reports when they changed and the
  // interval allows.
  void Turn();
  // Both reports of `snapshot` under `policy`, each kept when it succeeds.
  void Compute(const ClusterSnapshot& snapshot, const Policy& policy);

  const Published<ClusterSnapshot>& snapshots_;
  const Published<Policy>& policies_;
  std::function<bool()> ready_;
  ReportsWorkerOptions options_;
  ReportSlot<CapacityResult> capacity_;
  ReportSlot<WhyPendingResult> pending_;
  Cancellation cancellation_;  // raised by the destructor
  // What the last attempt described; only the polling thread touches them.
  std::chrono::steady_clock::time_point next_allowed_{};
  bool have_ = false;
  uint64_t last_generation_ = 0;
  std::string last_digest_;
  PeriodicThread polling_;  // last: it starts once everything it reads is built
};

}  // namespace gpusched
