// SeriesWriter: how a producer writes the series it owns into a /metrics scrape.
//
// A part of the server that has state worth exposing (the inventory source, the serving policy,
// the reports worker, the snapshot's figures) owns its series: it registers a SeriesCollector
// with Metrics::AddCollector once, and at every scrape that collector names its families (name,
// help, type) and writes their current samples here. Nothing is kept between scrapes, so a series
// is never stale and costs nothing between them. A family that gets no sample in a scrape is left
// out of it. Names and help texts are the exposition's: docs/metrics.md lists every family, and
// docs_test keeps the two in step (docs/architecture.md, "Adding a metric").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace prometheus {
class Counter;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace gpusched {

// A sample's labels, by label name.
using SeriesLabels = std::map<std::string, std::string>;

class SeriesWriter {
 public:
  // A family of the scrape, to add its samples to.
  class Family {
   public:
    // One sample: a gauge's value, or a counter's total so far.
    void Add(const SeriesLabels& labels, double value);

   private:
    friend class SeriesWriter;
    prometheus::Family<prometheus::Gauge>* gauge_ = nullptr;
    prometheus::Family<prometheus::Counter>* counter_ = nullptr;
  };

  // Writes into `scrape`, a registry made for one scrape (Metrics::Scrape makes it).
  explicit SeriesWriter(prometheus::Registry& scrape) : scrape_(scrape) {}

  Family Gauge(std::string_view name, std::string_view help);
  Family Counter(std::string_view name, std::string_view help);

 private:
  prometheus::Registry& scrape_;
};

// A producer's series, written at each scrape; called on the scraping thread.
using SeriesCollector = std::function<void(SeriesWriter&)>;

}  // namespace gpusched
