#include "gpusched/planning/why_pending_format.h"

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
    for (const auto& name : g.sample) sample += (sample.empty() ? "" : " ") + name;
    if (g.pods > g.sample.size()) sample += " ...";
    rows.push_back({g.shape, g.reason, std::to_string(g.pods), WaitText(r.OldestWait(g)),
                    g.autoscaler, std::move(sample)});
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
    w.BeginObject().Key("shape").String(g.shape).Key("reason").String(g.reason);
    w.Key("autoscaler").String(g.autoscaler);
    w.Key("pods").Int(static_cast<int64_t>(g.pods)).Key("oldestWaitSeconds");
    if (int64_t wait = r.OldestWait(g); wait >= 0) {
      w.Int(wait);
    } else {
      w.Null();
    }
    w.Key("sample").BeginArray();
    for (const auto& name : g.sample) w.String(name);
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return out + "\n";
}

}  // namespace gpusched
