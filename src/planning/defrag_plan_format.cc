#include "gpusched/planning/defrag_plan_format.h"

#include "gpusched/codec/json_writer.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

std::string GpusText(int64_t milli) {
  std::string n = FormatGpus(static_cast<double>(milli) / 1000);
  return n + (n == "1" ? " GPU" : " GPUs");
}

std::string_view OutcomeName(DefragOutcome outcome) {
  switch (outcome) {
    case DefragOutcome::kFitsNow:
      return "fits-now";
    case DefragOutcome::kPlan:
      return "plan";
    case DefragOutcome::kNoPlan:
      return "no-plan";
  }
  return "no-plan";
}

}  // namespace

std::string FormatDefragPlanText(const DefragReport& r) {
  std::string out = "defragmentation plan for " +
                    (r.inventory.empty() ? "the inventory" : r.inventory) + ", policy " +
                    r.policy_source + "; " + std::to_string(r.waiting) + " waiting GPU pod" +
                    (r.waiting == 1 ? "" : "s") + ", " + std::to_string(r.budgets) +
                    " disruption budget" + (r.budgets == 1 ? "" : "s");
  if (r.budgets_skipped > 0) out += " (" + std::to_string(r.budgets_skipped) + " unreadable)";
  out += "\nadvice only: gpusched moves nothing; each plan counts those above it as carried out\n";
  if (r.plans.size() < r.waiting) {
    out += "planned the first " + std::to_string(r.plans.size()) + " by priority and age\n";
  }
  for (const PodDefragPlan& p : r.plans) {
    out += "\n" + QuoteForMessage(p.pod) + " (" + FormatResourceList(p.gpu_demand) + ", priority " +
           std::to_string(p.priority) + ", profile " + QuoteForMessage(p.profile) + "): ";
    switch (p.outcome) {
      case DefragOutcome::kFitsNow:
        out += "fits now on " + QuoteForMessage(p.node) + "\n";
        break;
      case DefragOutcome::kPlan:
        out += std::to_string(p.moves.size()) + (p.moves.size() == 1 ? " move" : " moves") +
               " free " + GpusText(p.gpus_freed_milli) + " on " + QuoteForMessage(p.node) +
               (p.search_cut ? " (search stopped at its bound: maybe not the fewest)" : "") + "\n";
        for (const DefragMove& m : p.moves) {
          out += "  move " + QuoteForMessage(m.pod) + " (" + GpusText(m.gpu_milli) + ") from " +
                 QuoteForMessage(m.from) + " to " + QuoteForMessage(m.to) + "\n";
        }
        out += "  then it fits on " + QuoteForMessage(p.node) + "\n";
        break;
      case DefragOutcome::kNoPlan:
        out += "no plan: " + p.why + "\n";
        break;
    }
  }
  return out;
}

std::string FormatDefragPlanJson(const DefragReport& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(r.inventory).Key("policy").String(r.policy_source);
  w.Key("budgets").Int(static_cast<int64_t>(r.budgets));
  w.Key("budgetsSkipped").Int(static_cast<int64_t>(r.budgets_skipped));
  w.Key("waiting").Int(static_cast<int64_t>(r.waiting)).Key("plans").BeginArray();
  for (const PodDefragPlan& p : r.plans) {
    w.BeginObject().Key("pod").String(p.pod).Key("profile").String(p.profile);
    w.Key("priority").Int(p.priority).Key("requests").BeginObject();
    for (const auto& d : p.gpu_demand) w.Key(d.name).Int(d.milli / 1000);
    w.EndObject().Key("outcome").String(OutcomeName(p.outcome)).Key("node").String(p.node);
    w.Key("moves").BeginArray();
    for (const DefragMove& m : p.moves) {
      w.BeginObject().Key("pod").String(m.pod).Key("from").String(m.from).Key("to").String(m.to);
      w.Key("gpus").Double(static_cast<double>(m.gpu_milli) / 1000).EndObject();
    }
    w.EndArray().Key("gpusFreed").Double(static_cast<double>(p.gpus_freed_milli) / 1000);
    w.Key("searchCut").Bool(p.search_cut).Key("why").String(p.why).EndObject();
  }
  w.EndArray().EndObject();
  return out + "\n";
}

}  // namespace gpusched
