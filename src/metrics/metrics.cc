#include "gpusched/metrics/metrics.h"

#include <mutex>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace gpusched {
namespace {

using prometheus::Labels;

// Request latencies span 50 us (a few names) to seconds (15k full Nodes on a busy machine).
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
const prometheus::Histogram::BucketBoundaries kNodeBuckets = {1,    10,   50,    100,  500,
                                                              1000, 5000, 10000, 20000};

std::string Str(std::string_view s) { return std::string(s); }

}  // namespace

struct Metrics::Impl {
  std::mutex collectors_mu;
  std::vector<SeriesCollector> collectors;  // guarded by collectors_mu
  std::shared_ptr<prometheus::Registry> events = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("gpusched_extender_requests_total")
          .Help("Extender calls by verb and outcome (ok, bad_request, not_ready, error)")
          .Register(*events);
  prometheus::Family<prometheus::Histogram>& latency =
      prometheus::BuildHistogram()
          .Name("gpusched_extender_request_duration_seconds")
          .Help("Time from a decoded request to its encoded answer, by verb and outcome")
          .Register(*events);
  prometheus::Family<prometheus::Histogram>& nodes =
      prometheus::BuildHistogram()
          .Name("gpusched_extender_request_nodes")
          .Help("Candidate nodes per extender call, by verb")
          .Register(*events);
  prometheus::Family<prometheus::Counter>& decisions =
      prometheus::BuildCounter()
          .Name("gpusched_decisions_total")
          .Help("Pods filtered or prioritized, by verb and the policy profile that judged them")
          .Register(*events);
  prometheus::Family<prometheus::Counter>& rejections =
      prometheus::BuildCounter()
          .Name("gpusched_filter_rejections_total")
          .Help(
              "Nodes rejected by filter, by plugin and verdict class (unschedulable: "
              "preemption may help; unresolvable: it cannot)")
          .Register(*events);
  // Registered with its one series at 0, so that alerts on it work before the first rejection.
  prometheus::Counter& budget_rejections =
      prometheus::BuildCounter()
          .Name("gpusched_http_budget_rejections_total")
          .Help(
              "Requests answered 503 because the request bytes held across connections would "
              "pass --max-inflight-body-bytes")
          .Register(*events)
          .Add({});
  prometheus::Counter& dropped_answers =
      prometheus::BuildCounter()
          .Name("gpusched_http_answers_dropped_total")
          .Help(
              "Answers replaced by a 503 because the answers waiting for slow readers and the "
              "requests in flight would pass the listener's in-flight byte budget")
          .Register(*events)
          .Add({});
  prometheus::Counter& dra_unmodelled =
      prometheus::BuildCounter()
          .Name("gpusched_dra_unmodelled_total")
          .Help(
              "filter and prioritize calls for a pod whose DRA claims gpusched does not model "
              "(a selector outside its CEL subset, allocationMode All, a claim or class not yet "
              "listed, ...): every node passed and scored alike; the reason is logged at debug")
          .Register(*events)
          .Add({});
  prometheus::Counter& busy_reports =
      prometheus::BuildCounter()
          .Name("gpusched_http_reports_busy_total")
          .Help(
              "GETs of /metrics, /capacity or /why-pending answered 503 because the listener was "
              "building as many answers of that kind as it allows beside its probes")
          .Register(*events)
          .Add({});

  Impl() {
    prometheus::BuildGauge()
        .Name("gpusched_build_info")
        .Help("Always 1; the version label names the running gpusched")
        .Register(*events)
        .Add({{"version", GPUSCHED_VERSION}})
        .Set(1);
    // The 503s of an inventory not ready are shown at 0 from the start: increase() and alerts
    // then see the first one (a series that appears with its first event shows no increase).
    for (const char* verb : {"filter", "prioritize"}) {
      requests.Add({{"verb", verb}, {"outcome", "not_ready"}});
    }
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::ObserveRequest(std::string_view verb, std::string_view outcome, double seconds,
                             size_t nodes) {
  Labels labels{{"verb", Str(verb)}, {"outcome", Str(outcome)}};
  impl_->requests.Add(labels).Increment();
  impl_->latency.Add(labels, kLatencyBuckets).Observe(seconds);
  if (outcome == "ok") {
    impl_->nodes.Add({{"verb", Str(verb)}}, kNodeBuckets).Observe(static_cast<double>(nodes));
  }
}

void Metrics::CountDecision(std::string_view verb, std::string_view profile) {
  impl_->decisions.Add({{"verb", Str(verb)}, {"profile", Str(profile)}}).Increment();
}

void Metrics::CountRejections(std::string_view plugin, std::string_view verdict_class,
                              uint64_t count) {
  impl_->rejections.Add({{"plugin", Str(plugin)}, {"class", Str(verdict_class)}})
      .Increment(static_cast<double>(count));
}

void Metrics::CountRequestBudgetRejection() { impl_->budget_rejections.Increment(); }

void Metrics::CountDroppedAnswer() { impl_->dropped_answers.Increment(); }
void Metrics::CountDraUnmodelled() { impl_->dra_unmodelled.Increment(); }

void Metrics::CountBusyReport() { impl_->busy_reports.Increment(); }

void Metrics::AddCollector(SeriesCollector collect) {
  std::lock_guard lock(impl_->collectors_mu);
  impl_->collectors.push_back(std::move(collect));
}

std::string Metrics::Scrape() const {
  std::vector<prometheus::MetricFamily> families = impl_->events->Collect();
  std::vector<SeriesCollector> collectors;
  {
    // A copy, so that scrapes (the listener allows two at a time) collect side by side.
    std::lock_guard lock(impl_->collectors_mu);
    collectors = impl_->collectors;
  }
  prometheus::Registry scrape;
  SeriesWriter writer(scrape);
  for (const auto& collect : collectors) collect(writer);
  auto state = scrape.Collect();
  families.insert(families.end(), state.begin(), state.end());
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gpusched
