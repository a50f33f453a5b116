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
    case DefragOutcome::kDomainPlan:
      return "domain-plan";
    case DefragOutcome::kCovered:
      return "covered";
  }
  return "no-plan";
}

// "rack 'r2'".
std::string DomainText(const DefragGroupPlan& g) {
  return QuoteForMessage(g.level, 64) + " '" + QuoteForMessage(g.domain, 96) + "'";
}

// "r2-0 x2, r2-1": the member nodes in order, a run of one node counted.
std::string MemberNodesText(const std::vector<std::string>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t run = 1;
    while (i + run < nodes.size() && nodes[i + run] == nodes[i]) ++run;
    if (!out.empty()) out += ", ";
    out += QuoteForMessage(nodes[i]) + (run > 1 ? " x" + std::to_string(run) : "");
    i += run;
  }
  return out;
}

void MovesText(const PodDefragPlan& p, std::string& out) {
  for (const DefragMove& m : p.moves) {
    out += "  move " + QuoteForMessage(m.pod) + " (" + GpusText(m.gpu_milli) + ") from " +
           QuoteForMessage(m.from) + " to " + QuoteForMessage(m.to) + "\n";
  }
}

std::string MovesFree(const PodDefragPlan& p) {
  return std::to_string(p.moves.size()) + (p.moves.size() == 1 ? " move" : " moves") + " free " +
         GpusText(p.gpus_freed_milli);
}

std::string_view CutText(const PodDefragPlan& p) {
  return p.search_cut ? " (search stopped at its bound: maybe not the fewest)" : "";
}

// The keys of a plan that concerns a pod group: "group", then "domain", "memberNodes" and
// "coveredBy" where they apply.
void GroupJson(const DefragGroupPlan& g, JsonWriter& w) {
  w.Key("group").BeginObject().Key("key").String(g.key).Key("size").Int(g.size);
  w.Key("toPlace").Int(g.to_place).EndObject();
  if (!g.level.empty()) {
    w.Key("domain").BeginObject().Key("level").String(g.level).Key("name").String(g.domain);
    w.EndObject();
  }
  if (!g.member_nodes.empty()) {
    w.Key("memberNodes").BeginArray();
    for (const std::string& node : g.member_nodes) w.String(node);
    w.EndArray();
  }
  if (!g.covered_by.empty()) w.Key("coveredBy").String(g.covered_by);
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
        out += MovesFree(p) + " on " + QuoteForMessage(p.node) + std::string(CutText(p)) + "\n";
        MovesText(p, out);
        out += "  then it fits on " + QuoteForMessage(p.node) + "\n";
        break;
      case DefragOutcome::kNoPlan:
        out += "no plan: " + p.why + "\n";
        break;
      case DefragOutcome::kDomainPlan:
        out += "pod group " + QuoteForMessage(p.group->key) + " of " +
               std::to_string(p.group->size) + ": " + MovesFree(p) + " in " + DomainText(*p.group) +
               std::string(CutText(p)) + "\n";
        MovesText(p, out);
        out += "  then its " + std::to_string(p.group->to_place) + " members to place fit in " +
               DomainText(*p.group) + ": " + MemberNodesText(p.group->member_nodes) + "\n";
        break;
      case DefragOutcome::kCovered:
        out += "covered by the domain plan of " + QuoteForMessage(p.group->covered_by) +
               " for its pod group: " +
               (p.node.empty() ? std::string() : "goes to " + QuoteForMessage(p.node) + " ") +
               "in " + DomainText(*p.group) + "\n";
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
    w.Key("searchCut").Bool(p.search_cut).Key("why").String(p.why);
    if (p.group) GroupJson(*p.group, w);
    w.EndObject();
  }
  w.EndArray().EndObject();
  return out + "\n";
}

}  // namespace gpusched
