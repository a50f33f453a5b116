#include "gpusched/sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

// Four decimals: enough for percentages, and stable text for byte-identical reports.
double Rounded(double v) { return std::nearbyint(v * 1e4) / 1e4; }

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void OptionalDouble(JsonWriter& w, std::string_view key, const std::optional<double>& v) {
  w.Key(key);
  if (v) {
    w.Double(Rounded(*v));
  } else {
    w.Null();
  }
}

std::optional<double> Mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Mean unallocated GPU % per arrived percent over a policy's runs.
std::vector<std::optional<double>> MeanCurve(const PolicySummary& p) {
  std::vector<std::optional<double>> out(kMaxArrivedPct + 1);
  for (int x = 0; x <= kMaxArrivedPct; ++x) {
    std::vector<double> values;
    for (const auto& r : p.runs) {
      if (auto u = UnallocatedAt(r, x)) values.push_back(*u);
    }
    out[x] = Mean(values);
  }
  return out;
}

}  // namespace

std::optional<double> UnallocatedAt(const SimRun& run, int arrived_pct) {
  if (arrived_pct < 0 || arrived_pct >= static_cast<int>(run.curve.size())) return std::nullopt;
  const auto& p = run.curve[arrived_pct];
  if (!p) return std::nullopt;
  return 100 - p->allocated_pct;
}

std::optional<double> IdleOrHeldByPartialJobsAt100(const SimRun& run) {
  auto unallocated = UnallocatedAt(run, 100);
  int64_t capacity = 0;
  for (const auto& [model, usage] : run.per_model) capacity += usage.capacity_milli;
  if (!unallocated || capacity <= 0 || run.gangs.jobs == 0) return std::nullopt;
  return *unallocated + 100.0 *
                            static_cast<double>(run.gangs.gpus_held_by_partial_jobs_at_full_milli) /
                            static_cast<double>(capacity);
}

std::vector<PolicySummary> Summarize(const std::vector<std::string>& policy_order,
                                     std::vector<SimRun> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const SimRun& a, const SimRun& b) { return a.seed < b.seed; });
  std::vector<PolicySummary> out;
  for (const auto& name : policy_order) {
    PolicySummary s;
    s.name = name;
    std::vector<double> at100, at130, at_end, failures;
    for (auto& r : runs) {
      if (r.policy != name) continue;
      if (auto u = UnallocatedAt(r, 100)) at100.push_back(*u);
      if (auto u = UnallocatedAt(r, kMaxArrivedPct)) at130.push_back(*u);
      if (r.first_failure_arrived_pct) failures.push_back(*r.first_failure_arrived_pct);
      at_end.push_back(r.allocated_at_end_pct);
      s.runs.push_back(std::move(r));
    }
    s.unallocated_gpu_pct_at_100 = Mean(at100);
    s.unallocated_gpu_pct_at_130 = Mean(at130);
    s.allocated_gpu_pct_at_end = Mean(at_end);
    s.first_failure_arrived_pct = Median(failures);
    out.push_back(std::move(s));
  }
  return out;
}

std::string FormatReportJson(const ReportInputs& inputs, const std::vector<PolicySummary>& s) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("nodes").String(inputs.nodes_path).Key("pods").String(inputs.pods_path);
  w.Key("tune").Double(inputs.tune).Key("order").String(inputs.order);
  w.Key("percentage_of_nodes_to_score").Int(inputs.percentage_of_nodes_to_score);
  w.Key("blend").String(inputs.blend);
  w.Key("tie_break").String(inputs.tie_break.empty() ? "policy" : inputs.tie_break);
  w.Key("policies").BeginArray();
  for (const auto& p : s) {
    w.BeginObject().Key("name").String(p.name);
    OptionalDouble(w, "unallocated_gpu_pct_at_100", p.unallocated_gpu_pct_at_100);
    OptionalDouble(w, "unallocated_gpu_pct_at_130", p.unallocated_gpu_pct_at_130);
    OptionalDouble(w, "allocated_gpu_pct_at_end", p.allocated_gpu_pct_at_end);
    OptionalDouble(w, "first_failure_arrived_pct", p.first_failure_arrived_pct);
    w.Key("per_seed").BeginArray();
    for (const auto& r : p.runs) {
      w.BeginObject().Key("seed").Int(static_cast<int64_t>(r.seed));
      OptionalDouble(w, "unallocated_gpu_pct_at_100", UnallocatedAt(r, 100));
      OptionalDouble(w, "unallocated_gpu_pct_at_130", UnallocatedAt(r, kMaxArrivedPct));
      w.Key("allocated_gpu_pct_at_end").Double(Rounded(r.allocated_at_end_pct));
      OptionalDouble(w, "first_failure_arrived_pct", r.first_failure_arrived_pct);
      w.Key("pods").Int(r.pods).Key("pods_placed").Int(r.pods_placed);
      w.Key("pods_failed").Int(r.pods_failed);
      std::optional<double> frag100;
      if (r.curve.size() > 100 && r.curve[100]) frag100 = r.curve[100]->frag_amount_pct;
      OptionalDouble(w, "fragmentation_amount_pct_at_100", frag100);
      if (r.gangs.jobs > 0) {
        const GangFigures& g = r.gangs;
        w.Key("jobs").BeginObject().Key("total").Int(g.jobs);
        w.Key("fitting_one_domain").Int(g.jobs_fitting_one_domain);
        w.Key("fitting_in_one_domain").Int(g.fitting_jobs_in_one_domain);
        w.Key("whole").Int(g.jobs_whole).Key("refused_whole").Int(g.jobs_refused_whole);
        w.Key("partial").Int(g.partial_jobs).Key("partial_sized").Int(g.partial_sized_jobs);
        w.Key("member_retries").Int(g.member_retries);
        w.Key("gpus_held_by_partial")
            .Double(Rounded(static_cast<double>(g.gpus_held_by_partial_jobs_milli) / 1000));
        w.Key("gpus_held_by_partial_at_100")
            .Double(Rounded(static_cast<double>(g.gpus_held_by_partial_jobs_at_full_milli) / 1000));
        OptionalDouble(w, "idle_or_held_by_partial_gpu_pct_at_100",
                       IdleOrHeldByPartialJobsAt100(r));
        w.EndObject();
      }
      w.Key("per_model").BeginObject();
      for (const auto& [model, u] : r.per_model) {
        double cap = static_cast<double>(u.capacity_milli);
        w.Key(model).BeginObject().Key("gpus").Double(Rounded(cap / 1000));
        w.Key("unallocated_gpu_pct_at_100")
            .Double(Rounded(100.0 * (cap - static_cast<double>(u.allocated_at_100_milli)) / cap));
        w.Key("unallocated_gpu_pct_at_end")
            .Double(Rounded(100.0 * (cap - static_cast<double>(u.allocated_at_end_milli)) / cap));
        w.EndObject();
      }
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out += '\n';
  return out;
}

std::string FormatCurvesCsv(const std::vector<PolicySummary>& s) {
  std::string out =
      "policy,seed,arrived_pct,allocated_pct,unallocated_pct,frag_amount_pct,frag_rate_pct\n";
  for (const auto& p : s) {
    for (const auto& r : p.runs) {
      for (int x = 0; x < static_cast<int>(r.curve.size()); ++x) {
        if (!r.curve[x]) continue;
        const CurvePoint& c = *r.curve[x];
        out += p.name + "," + std::to_string(r.seed) + "," + std::to_string(x) + "," +
               Fixed(c.allocated_pct, 2) + "," + Fixed(100 - c.allocated_pct, 2) + "," +
               Fixed(c.frag_amount_pct, 4) + "," + Fixed(c.frag_rate_pct, 4) + "\n";
      }
    }
  }
  return out;
}

std::string FormatCurvesSvg(const std::vector<PolicySummary>& s, const std::string& title) {
  // Plot area: x 0..130 % arrived, y 0..max unallocated (rounded up to 10).
  const double left = 60, top = 40, width = 640, height = 360;
  std::vector<std::vector<std::optional<double>>> curves;
  double ymax = 10;
  for (const auto& p : s) {
    curves.push_back(MeanCurve(p));
    for (int x = 60; x <= kMaxArrivedPct; ++x) {
      if (curves.back()[x]) ymax = std::max(ymax, *curves.back()[x]);
    }
  }
  ymax = std::ceil(ymax / 10) * 10;
  const double xmin = 60;  // below 60% every policy places everything
  auto px = [&](double x) { return left + (x - xmin) / (kMaxArrivedPct - xmin) * width; };
  auto py = [&](double y) { return top + height - std::min(y, ymax) / ymax * height; };
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::string out =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\"460\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"860\" height=\"460\" "
      "fill=\"white\"/>\n";
  out += "<text x=\"" + Fixed(left, 0) + "\" y=\"24\" font-size=\"14\">" + title + "</text>\n";
  for (int x = 60; x <= kMaxArrivedPct; x += 10) {
    out += "<line x1=\"" + Fixed(px(x), 1) + "\" y1=\"" + Fixed(top, 1) + "\" x2=\"" +
           Fixed(px(x), 1) + "\" y2=\"" + Fixed(top + height, 1) + "\" stroke=\"#eee\"/>\n";
    out += "<text x=\"" + Fixed(px(x) - 8, 1) + "\" y=\"" + Fixed(top + height + 16, 1) + "\">" +
           std::to_string(x) + "</text>\n";
  }
  for (double y = 0; y <= ymax; y += ymax / 5) {
    out += "<line x1=\"" + Fixed(left, 1) + "\" y1=\"" + Fixed(py(y), 1) + "\" x2=\"" +
           Fixed(left + width, 1) + "\" y2=\"" + Fixed(py(y), 1) + "\" stroke=\"#eee\"/>\n";
    out += "<text x=\"" + Fixed(left - 30, 1) + "\" y=\"" + Fixed(py(y) + 4, 1) + "\">" +
           Fixed(y, 0) + "</text>\n";
  }
  out += "<text x=\"" + Fixed(left + width / 2 - 90, 1) + "\" y=\"" + Fixed(top + height + 36, 1) +
         "\">arrived workload (% of GPU capacity)</text>\n";
  out += "<text transform=\"rotate(-90)\" x=\"" + Fixed(-(top + height / 2 + 60), 1) +
         "\" y=\"16\">unallocated GPU (%)</text>\n";
  for (size_t i = 0; i < s.size(); ++i) {
    std::string points;
    for (int x = 60; x <= kMaxArrivedPct; ++x) {
      if (curves[i][x]) points += Fixed(px(x), 1) + "," + Fixed(py(*curves[i][x]), 1) + " ";
    }
    const char* color = kColors[i % std::size(kColors)];
    out += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(color) +
           "\" points=\"" + points + "\"/>\n";
    double ly = top + 14 + 16 * static_cast<double>(i);
    out += "<text x=\"" + Fixed(left + width + 12, 1) + "\" y=\"" + Fixed(ly, 1) + "\" fill=\"" +
           color + "\">" + s[i].name + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string FormatJobsTable(const std::vector<PolicySummary>& s) {
  std::string out;
  for (const auto& p : s) {
    GangFigures sum;
    std::vector<double> wasted_at_100;
    for (const auto& r : p.runs) {
      if (auto w = IdleOrHeldByPartialJobsAt100(r)) wasted_at_100.push_back(*w);
      sum.jobs += r.gangs.jobs;
      sum.jobs_fitting_one_domain += r.gangs.jobs_fitting_one_domain;
      sum.fitting_jobs_in_one_domain += r.gangs.fitting_jobs_in_one_domain;
      sum.jobs_whole += r.gangs.jobs_whole;
      sum.jobs_refused_whole += r.gangs.jobs_refused_whole;
      sum.partial_jobs += r.gangs.partial_jobs;
      sum.partial_sized_jobs += r.gangs.partial_sized_jobs;
      sum.gpus_held_by_partial_jobs_milli += r.gangs.gpus_held_by_partial_jobs_milli;
      sum.member_retries += r.gangs.member_retries;
    }
    if (sum.jobs == 0) continue;
    if (out.empty()) {
      out =
          "| policy | jobs that fit one domain, landed in one | jobs whole | refused whole | "
          "partial (of known size) | GPUs held by partial jobs (mean per seed) | GPU % idle or "
          "held by partial "
          "jobs at 100% arrived | members judged again |\n"
          "|---|---|---|---|---|---|---|---|\n";
    }
    const double share = sum.jobs_fitting_one_domain > 0
                             ? 100.0 * static_cast<double>(sum.fitting_jobs_in_one_domain) /
                                   static_cast<double>(sum.jobs_fitting_one_domain)
                             : 0;
    out += "| " + p.name + " | " + Fixed(share, 1) + "% (" +
           std::to_string(sum.fitting_jobs_in_one_domain) + "/" +
           std::to_string(sum.jobs_fitting_one_domain) + ") | " + std::to_string(sum.jobs_whole) +
           "/" + std::to_string(sum.jobs) + " | " + std::to_string(sum.jobs_refused_whole) + " | " +
           std::to_string(sum.partial_jobs) + " (" + std::to_string(sum.partial_sized_jobs) +
           ") | " +
           Fixed(static_cast<double>(sum.gpus_held_by_partial_jobs_milli) / 1000 /
                     static_cast<double>(std::max<size_t>(p.runs.size(), 1)),
                 1) +
           " | " + (wasted_at_100.empty() ? std::string("-") : Fixed(*Mean(wasted_at_100), 2)) +
           " | " + std::to_string(sum.member_retries) + " |\n";
  }
  return out;
}

std::string FormatSummaryTable(const std::vector<PolicySummary>& s) {
  auto cell = [](const std::optional<double>& v, int decimals) {
    return v ? Fixed(*v, decimals) : std::string("-");
  };
  std::string out =
      "| policy | unallocated GPU % at 100% arrived | at 130% | allocated GPU % after the last pod "
      "| first failure at arrived % (median) | seeds |\n|---|---|---|---|---|---|\n";
  for (const auto& p : s) {
    out += "| " + p.name + " | " + cell(p.unallocated_gpu_pct_at_100, 2) + " | " +
           cell(p.unallocated_gpu_pct_at_130, 2) + " | " + cell(p.allocated_gpu_pct_at_end, 2) +
           " | " + cell(p.first_failure_arrived_pct, 1) + " | " + std::to_string(p.runs.size()) +
           " |\n";
  }
  return out;
}

}  // namespace gpusched
