#include "gpusched/metrics/series_writer.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace gpusched {

void SeriesWriter::Family::Add(const SeriesLabels& labels, double value) {
  if (gauge_) {
    gauge_->Add(labels).Set(value);
  } else {
    counter_->Add(labels).Increment(value);
  }
}

SeriesWriter::Family SeriesWriter::Gauge(std::string_view name, std::string_view help) {
  Family f;
  f.gauge_ =
      &prometheus::BuildGauge().Name(std::string(name)).Help(std::string(help)).Register(scrape_);
  return f;
}

SeriesWriter::Family SeriesWriter::Counter(std::string_view name, std::string_view help) {
  Family f;
  f.counter_ =
      &prometheus::BuildCounter().Name(std::string(name)).Help(std::string(help)).Register(scrape_);
  return f;
}

}  // namespace gpusched
