#include "gpusched/planning/why_pending_format.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "gpusched/codec/json_writer.h"
#include "gpusched/util/quote.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

std::string WaitText(int64_t seconds) {
  if (seconds < 0) return "-";
  int64_t d = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60,
          s = seconds % 60;
  if (d > 0) return std::to_string(d) + "d" + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h" + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m" + std::to_string(s) + "s";
  return std::to_string(s) + "s";
}

// A name, shape or reason of the report as it is written: quoted and bounded.
std::string Written(const std::string& text) { return QuoteForMessage(text, kMaxPendingTextBytes); }

}  // namespace

std::string FormatWhyPendingText(const WhyPendingReport& r) {
  std::string out = "why pending: " +
                    (r.inventory.empty() ? "the inventory" : QuoteForMessage(r.inventory, 512)) +
                    ", policy " + QuoteForMessage(r.policy_source, 512) + "\n";
  out += std::to_string(r.pending) + " GPU pod" + (r.pending == 1 ? "" : "s") +
         " pending (no node, not finished), " + std::to_string(r.judged) + " judged";
  if (r.skipped > 0) out += ", " + std::to_string(r.skipped) + " past the limit not judged";
  out +=
      "\nREASON: why scheduling fails on the best-looking nodes (those that came closest), as "
      "the pods' FailedScheduling events quote it: gpusched's filter, or kube-scheduler's own "
      "Insufficient\nAUTOSCALER: whether cluster-autoscaler or Karpenter will add a node for it, "
      "and "
      "whether gpusched's webhook wrote its rules into its node affinity\n";
  if (r.groups.empty()) return out;
  out += "\n";
  std::vector<std::vector<std::string>> rows = {
      {"SHAPE", "REASON", "PODS", "OLDEST", "AUTOSCALER", "PODS SAMPLE"}};
  for (const auto& g : r.groups) {
    std::string sample;
    for (const auto& name : g.sample) sample += (sample.empty() ? "" : " ") + Written(name);
    if (g.pods > g.sample.size()) sample += " ...";
    rows.push_back({Written(g.shape), Written(g.reason), std::to_string(g.pods),
                    WaitText(r.OldestWait(g)), g.autoscaler, std::move(sample)});
  }
  return out + AlignColumns(rows);
}

std::string FormatWhyPendingJson(const WhyPendingReport& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(r.inventory).Key("policy").String(r.policy_source);
  w.Key("nowUnix").Int(r.now_unix).Key("pending").Int(static_cast<int64_t>(r.pending));
  w.Key("judged").Int(static_cast<int64_t>(r.judged));
  w.Key("skipped").Int(static_cast<int64_t>(r.skipped)).Key("groups").BeginArray();
  for (const auto& g : r.groups) {
    w.BeginObject().Key("shape").String(Written(g.shape)).Key("reason").String(Written(g.reason));
    w.Key("autoscaler").String(g.autoscaler);
    w.Key("pods").Int(static_cast<int64_t>(g.pods)).Key("oldestWaitSeconds");
    if (int64_t wait = r.OldestWait(g); wait >= 0) {
      w.Int(wait);
    } else {
      w.Null();
    }
    w.Key("sample").BeginArray();
    for (const auto& name : g.sample) w.String(Written(name));
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return out + "\n";
}

void WhyPendingGaugesOf(const WhyPendingReport& report, std::vector<GaugeRow>& pods,
                        std::vector<GaugeRow>& oldest, size_t max_shapes, size_t max_reasons) {
  std::map<std::string, double> by_shape;
  std::map<std::string, double> by_reason;
  for (const auto& g : report.groups) {
    by_shape[Written(g.shape)] += static_cast<double>(g.pods);
    by_reason[Written(g.reason)] += static_cast<double>(g.pods);
  }
  const auto shape_label = TopOrOther(by_shape, max_shapes, kOtherPending);
  const auto reason_label = TopOrOther(by_reason, max_reasons, kOtherPending);
  std::map<std::pair<std::string, std::string>, double> counts;
  std::map<std::string, int64_t> waits;
  for (const auto& g : report.groups) {
    const std::string& shape = shape_label.at(Written(g.shape));
    counts[{shape, reason_label.at(Written(g.reason))}] += static_cast<double>(g.pods);
    if (int64_t wait = report.OldestWait(g); wait >= 0) {
      waits[shape] = std::max(waits[shape], wait);
    }
  }
  pods.clear();
  oldest.clear();
  for (const auto& [key, n] : counts) pods.push_back({key.first, key.second, n});
  for (const auto& [shape, wait] : waits) oldest.push_back({shape, "", static_cast<double>(wait)});
}

}  // namespace gpusched
