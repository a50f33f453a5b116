#include "gpusched/metrics/metrics.h"

#include <map>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "gpusched/metrics/cluster_fragmentation.h"

namespace gpusched {
namespace {

using prometheus::Labels;

// Request latencies span 50 us (a few names) to seconds (15k full Nodes on a busy machine).
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
const prometheus::Histogram::BucketBoundaries kNodeBuckets = {1,    10,   50,    100,  500,
                                                              1000, 5000, 10000, 20000};

std::string Str(std::string_view s) { return std::string(s); }

// Capacity and allocation per (resource, product), summed over nodes.
struct GpuTotals {
  int64_t capacity_milli = 0;
  int64_t allocated_milli = 0;
};

std::map<std::pair<std::string, std::string>, GpuTotals> TotalsOf(const ClusterSnapshot& snap) {
  std::map<std::pair<std::string, std::string>, GpuTotals> totals;
  for (const auto& node : snap.nodes()) {
    for (const auto& amount : node->info.allocatable) {
      auto& t = totals[{amount.name, node->info.gpu.product}];
      t.capacity_milli += amount.milli;
      t.allocated_milli += node->used.milli(amount.name);
    }
  }
  return totals;
}

// The state series, in a registry made for one scrape.
void AddStateSeries(const MetricsState& state, prometheus::Registry& r) {
  auto& synced = prometheus::BuildGauge()
                     .Name("gpusched_inventory_synced")
                     .Help("1 once the initial lists of nodes and pods are applied")
                     .Register(r);
  synced.Add({}).Set(state.inventory_synced ? 1 : 0);
  if (state.inventory_age_seconds) {
    prometheus::BuildGauge()
        .Name("gpusched_inventory_last_sync_age_seconds")
        .Help(
            "Seconds since the inventory last heard from the API server (list, event or bookmark)")
        .Register(r)
        .Add({})
        .Set(*state.inventory_age_seconds);
  }
  if (state.inventory_lists) {
    prometheus::BuildCounter()
        .Name("gpusched_inventory_lists_total")
        .Help("Full lists of nodes or pods made (the initial ones and every relist)")
        .Register(r)
        .Add({})
        .Increment(static_cast<double>(*state.inventory_lists));
  }
  if (state.watch_restarts) {
    prometheus::BuildCounter()
        .Name("gpusched_inventory_watch_restarts_total")
        .Help("Watches of nodes or pods that ended and were started again")
        .Register(r)
        .Add({})
        .Increment(static_cast<double>(*state.watch_restarts));
  }
  if (!state.inventory_skipped.empty()) {
    auto& skipped =
        prometheus::BuildCounter()
            .Name("gpusched_inventory_objects_skipped_total")
            .Help(
                "Listed or watched objects skipped by kind and reason (invalid: gpusched cannot "
                "use it; malformed: not an object of the expected shape; oversized: longer than "
                "--max-object-bytes); the rest went on")
            .Register(r);
    for (const auto& s : state.inventory_skipped) {
      skipped.Add({{"kind", std::string(s.kind)}, {"reason", std::string(s.reason)}})
          .Increment(static_cast<double>(s.count));
    }
  }
  if (!state.inventory_summarised.empty()) {
    auto& summarised =
        prometheus::BuildCounter()
            .Name("gpusched_inventory_objects_summarised_total")
            .Help(
                "Listed or watched objects kept in part, by kind and reason (extended_resources: "
                "more extended resource entries than the decoder keeps; the rest were counted)")
            .Register(r);
    for (const auto& s : state.inventory_summarised) {
      summarised.Add({{"kind", std::string(s.kind)}, {"reason", std::string(s.reason)}})
          .Increment(static_cast<double>(s.count));
    }
  }
  if (state.inventory_lists_abandoned) {
    prometheus::BuildCounter()
        .Name("gpusched_inventory_lists_abandoned_total")
        .Help(
            "Lists of nodes or pods given up past their page or object bound (listed again after "
            "a backoff; not ready meanwhile if no list completed)")
        .Register(r)
        .Add({})
        .Increment(static_cast<double>(*state.inventory_lists_abandoned));
  }
  auto& reloads = prometheus::BuildCounter()
                      .Name("gpusched_policy_reloads_total")
                      .Help("Policy file reloads by result (failed: the last good policy stayed)")
                      .Register(r);
  reloads.Add({{"result", "ok"}}).Increment(static_cast<double>(state.policy_reloads_ok));
  reloads.Add({{"result", "failed"}}).Increment(static_cast<double>(state.policy_reloads_failed));
  prometheus::BuildGauge()
      .Name("gpusched_policy_info")
      .Help("Always 1; the digest label identifies the policy in force")
      .Register(r)
      .Add({{"digest", state.policy_digest}})
      .Set(1);
  if (!state.capacity_gpus.empty()) {
    auto& gpus = prometheus::BuildGauge()
                     .Name("gpusched_capacity_gpus")
                     .Help(
                         "GPU equivalents per product (at most 32, the rest as other) and state "
                         "(total, allocated, idle, fragmented), from the last background capacity "
                         "computation")
                     .Register(r);
    for (const auto& v : state.capacity_gpus) {
      gpus.Add({{"product", v.product}, {"state", v.label}}).Set(v.value);
    }
    auto& fits = prometheus::BuildGauge()
                     .Name("gpusched_capacity_fits")
                     .Help(
                         "More pods of each standard shape that fit now, per product, from the "
                         "last background capacity computation")
                     .Register(r);
    for (const auto& v : state.capacity_fits) {
      fits.Add({{"product", v.product}, {"shape", v.label}}).Set(v.value);
    }
  }
  if (state.pending_reported) {
    auto& pending =
        prometheus::BuildGauge()
            .Name("gpusched_pending_pods")
            .Help(
                "GPU pods waiting for a node, by shape and by the reason their scheduling fails "
                "on the best-looking nodes, as their FailedScheduling events quote it (at most 16 "
                "of each, the rest as other), from the last background why-pending report")
            .Register(r);
    for (const auto& v : state.pending_pods) {
      pending.Add({{"shape", v.shape}, {"reason", v.reason}}).Set(v.value);
    }
    auto& oldest = prometheus::BuildGauge()
                       .Name("gpusched_pending_oldest_seconds")
                       .Help("How long the oldest pending GPU pod of each shape has waited")
                       .Register(r);
    for (const auto& v : state.pending_oldest) oldest.Add({{"shape", v.shape}}).Set(v.value);
  }
  if (!state.snapshot) return;
  const ClusterSnapshot& snap = *state.snapshot;
  prometheus::BuildGauge()
      .Name("gpusched_inventory_nodes")
      .Help("Nodes in the inventory")
      .Register(r)
      .Add({})
      .Set(static_cast<double>(snap.size()));
  int64_t gpu_pods = 0;
  int64_t pods = 0;
  for (const auto& node : snap.nodes()) {
    gpu_pods += node->gpu_pod_count;
    pods += node->pod_count;
  }
  prometheus::BuildGauge()
      .Name("gpusched_inventory_bound_pods")
      .Help("Bound, non-terminal pods whose requests count against their nodes")
      .Register(r)
      .Add({})
      .Set(static_cast<double>(pods));
  prometheus::BuildGauge()
      .Name("gpusched_inventory_gpu_pods")
      .Help("Bound, non-terminal pods that request GPU resources")
      .Register(r)
      .Add({})
      .Set(static_cast<double>(gpu_pods));
  auto& capacity = prometheus::BuildGauge()
                       .Name("gpusched_cluster_gpu_capacity")
                       .Help("Allocatable units of each GPU resource, per GPU product")
                       .Register(r);
  auto& allocated = prometheus::BuildGauge()
                        .Name("gpusched_cluster_gpu_allocated")
                        .Help("Units of each GPU resource requested by bound pods, per GPU product")
                        .Register(r);
  for (const auto& [key, t] : TotalsOf(snap)) {
    Labels labels{{"resource", key.first}, {"product", key.second}};
    capacity.Add(labels).Set(static_cast<double>(t.capacity_milli) / 1000);
    allocated.Add(labels).Set(static_cast<double>(t.allocated_milli) / 1000);
  }
  ClusterFragmentation frag = FragmentationOf(snap);
  prometheus::BuildGauge()
      .Name("gpusched_cluster_gpu_fragmentation_gpus")
      .Help(
          "Idle whole GPUs (nvidia.com/gpu) that the observed GPU workload could not use "
          "(the packing benchmark's fragmentation measure)")
      .Register(r)
      .Add({})
      .Set(frag.fragmented_gpus);
  prometheus::BuildGauge()
      .Name("gpusched_cluster_gpu_fragmentation_ratio")
      .Help("gpusched_cluster_gpu_fragmentation_gpus over the idle GPUs (0 when none is idle)")
      .Register(r)
      .Add({})
      .Set(frag.idle_gpus > 0 ? frag.fragmented_gpus / frag.idle_gpus : 0);
}

}  // namespace

struct Metrics::Impl {
  StateSource state;
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

  explicit Impl(StateSource s) : state(std::move(s)) {
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

Metrics::Metrics(StateSource state) : impl_(std::make_unique<Impl>(std::move(state))) {}
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

std::string Metrics::Scrape() const {
  std::vector<prometheus::MetricFamily> families = impl_->events->Collect();
  if (impl_->state) {
    prometheus::Registry scrape;
    AddStateSeries(impl_->state(), scrape);
    auto more = scrape.Collect();
    families.insert(families.end(), more.begin(), more.end());
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gpusched
