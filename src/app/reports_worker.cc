#include "gpusched/app/reports_worker.h"

#include <exception>
#include <string_view>

#include <spdlog/spdlog.h>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/codec/json_writer.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/planning/why_pending_format.h"

namespace gpusched {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kJsonType[] = "application/json; charset=utf-8";

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Each row of a report's gauge as one sample of `family`, its group and label under the label
// names `group_key` and `label_key`.
void WriteGaugeRows(SeriesWriter::Family family, const std::vector<GaugeRow>& rows,
                    const std::string& group_key, const std::string& label_key) {
  for (const GaugeRow& row : rows)
    family.Add({{group_key, row.group}, {label_key, row.label}}, row.value);
}

// A result's JSON with two members in front: the CLI's JSON, plus where it stands; 503 with
// `missing` before the first result.
template <class Result>
HttpResponse ServeLatest(const std::shared_ptr<const Result>& result, std::string_view missing) {
  if (!result) return HttpResponse{503, kJsonType, EncodeError(missing), ""};
  std::string head;
  JsonWriter w(head);
  w.BeginObject().Key("snapshotGeneration").Int(static_cast<int64_t>(result->generation));
  w.Key("ageSeconds").Double(SecondsSince(result->computed_at)).EndObject();
  // head is {"snapshotGeneration":N,"ageSeconds":X}; splice it before the report's first member.
  // The report itself is sent from the shared result, however many readers wait for it.
  head.back() = ',';
  HttpResponse r{200, kJsonType, std::move(head), ""};
  r.shared_tail = std::shared_ptr<const std::string>(result, &result->json);
  r.shared_from = 1;
  return r;
}

}  // namespace

ReportsWorker::ReportsWorker(const Published<ClusterSnapshot>& snapshots,
                             const Published<Policy>& policies, std::function<bool()> ready,
                             ReportsWorkerOptions options)
    : snapshots_(snapshots),
      policies_(policies),
      ready_(std::move(ready)),
      options_(std::move(options)),
      polling_(options_.poll, [this] { Turn(); }) {
  polling_.Wake();  // the first look at once, not one poll later
}

ReportsWorker::~ReportsWorker() {
  cancellation_.Cancel();  // a report in progress stops at its next node or pod
  polling_.Stop();
}

void ReportsWorker::Turn() {
  auto snapshot = snapshots_.Get();
  auto policy = policies_.Get();
  if (!snapshot || !policy || !ready_() || Clock::now() < next_allowed_) return;
  if (have_ && snapshot->generation() == last_generation_ && policy->digest() == last_digest_) {
    return;
  }
  Compute(*snapshot, *policy);
  // Throttled from this attempt's end: at most one report per interval, however often the
  // snapshot changes; a failed attempt is not retried before the inputs change.
  have_ = true;
  last_generation_ = snapshot->generation();
  last_digest_ = policy->digest();
  next_allowed_ = Clock::now() + options_.min_interval;
}

namespace {

// Computes a report, `compute(policy, snapshot, options)` with `cancellation` set in the options,
// and unless it was cancelled (incomplete), names the inventory in it, makes a Result of it with
// `fill(result)`, stamps it with the snapshot's generation and the time it took, publishes it and
// counts it. When either throws, it is logged under `what`; the last good result stays, as it
// does after a cancellation.
template <class Result, class Compute, class ComputeOptions, class Fill>
void PublishTimed(ReportSlot<Result>& out, const Policy& policy, const ClusterSnapshot& snapshot,
                  const Cancellation* cancellation, std::string_view inventory, const char* what,
                  Compute&& compute, ComputeOptions options, Fill&& fill) {
  try {
    auto start = std::chrono::steady_clock::now();
    auto result = std::make_shared<Result>();
    options.cancellation = cancellation;
    result->report = compute(policy, snapshot, options);
    if (result->report.cancelled) return;
    result->report.inventory = inventory;
    fill(*result);
    result->generation = snapshot.generation();
    result->computed_at = std::chrono::steady_clock::now();
    result->compute_seconds = std::chrono::duration<double>(result->computed_at - start).count();
    out.latest.Set(std::move(result));
    ++out.computed;
  } catch (const std::exception& e) {  // a last-resort barrier: the worker thread must live on
    spdlog::error("{}: {}", what, e.what());
  }
}

}  // namespace

void ReportsWorker::Compute(const ClusterSnapshot& snapshot, const Policy& policy) {
  const std::string_view inventory = options_.description;
  PublishTimed(capacity_, policy, snapshot, &cancellation_, inventory, "capacity", ComputeCapacity,
               CapacityOptions{}, [&](CapacityResult& r) {
                 r.json = FormatCapacityJson(r.report);
                 CapacityGaugesOf(r.report, r.gauge_gpus, r.gauge_fits);
                 r.policy_digest = policy.digest();
               });
  PublishTimed(pending_, policy, snapshot, &cancellation_, inventory, "why-pending",
               ComputeWhyPending, WhyPendingOptions{}, [](WhyPendingResult& r) {
                 r.json = FormatWhyPendingJson(r.report);
                 WhyPendingGaugesOf(r.report, r.gauge_pods, r.gauge_oldest);
               });
}

HttpResponse ReportsWorker::ServeCapacity() const {
  return ServeLatest(LatestCapacity(), "capacity not computed yet: waiting for the first report");
}

HttpResponse ReportsWorker::ServeWhyPending() const {
  return ServeLatest(LatestWhyPending(),
                     "why-pending not computed yet: waiting for the first report");
}

void ReportsWorker::WriteSeries(SeriesWriter& out) const {
  auto result = LatestCapacity();
  if (!result) return;
  WriteGaugeRows(out.Gauge("gpusched_capacity_gpus",
                           "GPU equivalents per product (at most 32, the rest as other) and state "
                           "(total, allocated, idle, fragmented), from the last background "
                           "capacity computation"),
                 result->gauge_gpus, "product", "state");
  WriteGaugeRows(out.Gauge("gpusched_capacity_fits",
                           "More pods of each standard shape that fit now, per product, from the "
                           "last background capacity computation"),
                 result->gauge_fits, "product", "shape");
  auto pending = LatestWhyPending();
  if (!pending) return;
  WriteGaugeRows(
      out.Gauge("gpusched_pending_pods",
                "GPU pods waiting for a node, by shape and by the reason their scheduling fails "
                "on the best-looking nodes, as their FailedScheduling events quote it (at most "
                "16 of each, the rest as other), from the last background why-pending report"),
      pending->gauge_pods, "shape", "reason");
  auto oldest = out.Gauge("gpusched_pending_oldest_seconds",
                          "How long the oldest pending GPU pod of each shape has waited");
  // The waits grew since the report: a scrape shows them as of now.
  const double age = SecondsSince(pending->computed_at);
  for (const auto& v : pending->gauge_oldest) oldest.Add({{"shape", v.group}}, v.value + age);
}

}  // namespace gpusched
