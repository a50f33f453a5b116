#include "gpusched/planning/capacity_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpusched/codec/json_writer.h"
#include "gpusched/util/quote.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

std::string Table(const CapacityReport& r, std::string_view heading,
                  const std::map<std::string, CapacityGroup>& groups) {
  std::vector<std::string> header = {
      std::string(heading), "NODES", "TOTAL", "ALLOC", "IDLE", "FRAG", "SHARED"};
  for (const auto& s : r.shapes) header.push_back(s.name);
  std::vector<std::vector<std::string>> rows = {std::move(header)};
  auto add = [&](const std::string& name, const CapacityGroup& g) {
    std::vector<std::string> row = {name,
                                    std::to_string(g.nodes),
                                    FormatGpus(g.gpus.total),
                                    FormatGpus(g.gpus.allocated),
                                    FormatGpus(g.gpus.idle),
                                    FormatGpus(g.gpus.fragmented),
                                    g.gpus.shared_replicas == 0
                                        ? "-"
                                        : std::to_string(g.gpus.shared_allocated) + "/" +
                                              std::to_string(g.gpus.shared_replicas)};
    for (size_t s = 0; s < g.fits.size(); ++s) {
      row.push_back((r.capped[s] ? ">=" : "") + std::to_string(g.fits[s]));
    }
    rows.push_back(std::move(row));
  };
  for (const auto& [name, g] : groups) add(name, g);
  add("all", r.cluster);
  return AlignColumns(rows);
}

// Hundredths, as the table shows them: MIG slices are counted in milli-GPU, rounded down per
// resource, so 7 slices of 1g read 0.994 unrounded.
double Hundredths(double v) { return std::round(v * 100) / 100; }

void GroupJson(JsonWriter& w, const CapacityReport& r, const CapacityGroup& g) {
  w.BeginObject().Key("nodes").Int(static_cast<int64_t>(g.nodes)).Key("gpus").BeginObject();
  w.Key("total").Double(Hundredths(g.gpus.total));
  w.Key("allocated").Double(Hundredths(g.gpus.allocated));
  w.Key("idle").Double(Hundredths(g.gpus.idle));
  w.Key("fragmented").Double(Hundredths(g.gpus.fragmented));
  if (g.gpus.shared_replicas > 0) {
    w.Key("sharedReplicas").Int(g.gpus.shared_replicas);
    w.Key("sharedAllocated").Int(g.gpus.shared_allocated);
  }
  if (g.gpus.mig_slices > 0) {
    w.Key("migSlices").Int(g.gpus.mig_slices);
    w.Key("migSlicesAllocated").Int(g.gpus.mig_slices_allocated);
  }
  w.EndObject().Key("fits").BeginObject();
  for (size_t s = 0; s < r.shapes.size(); ++s) w.Key(r.shapes[s].name).Int(g.fits[s]);
  w.EndObject();
  if (std::find(r.capped.begin(), r.capped.end(), true) != r.capped.end()) {
    w.Key("capped").BeginArray();
    for (size_t s = 0; s < r.shapes.size(); ++s) {
      if (r.capped[s]) w.String(r.shapes[s].name);
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::string FormatGpus(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string FormatCapacityText(const CapacityReport& r) {
  std::string out = "capacity of " +
                    (r.inventory.empty() ? "the inventory" : QuoteForMessage(r.inventory, 512)) +
                    ", policy " + QuoteForMessage(r.policy_source, 512) + " (profile " +
                    QuoteForMessage(r.profile) + ")\n";
  out +=
      "GPUs: physical GPUs (replicas and MIG-single slices as their share of one) plus MIG slices "
      "by compute slices (1g = 1/7); FRAG: idle GPUs the target workload's shapes cannot use "
      "(FGD); SHARED: time-sliced or MPS replicas allocated/total\n"
      "fits: more pods of each shape, placed one by one through the policy's engine, each "
      "shape alone\n\n";
  out += Table(r, "PRODUCT", r.products);
  if (!r.pool_label.empty()) {
    out += "\n" + Table(r, "POOL (" + QuoteForMessage(r.pool_label) + ")", r.pools);
  }
  return out;
}

std::string FormatCapacityJson(const CapacityReport& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(r.inventory).Key("policy").String(r.policy_source);
  w.Key("profile").String(r.profile).Key("shapes").BeginArray();
  for (const auto& s : r.shapes) {
    w.BeginObject().Key("name").String(s.name).Key("resource").String(s.resource);
    w.Key("count").Int(s.count).EndObject();
  }
  w.EndArray().Key("cluster");
  GroupJson(w, r, r.cluster);
  w.Key("products").BeginObject();
  for (const auto& [name, g] : r.products) {
    w.Key(name);
    GroupJson(w, r, g);
  }
  w.EndObject().Key("poolLabel").String(r.pool_label).Key("pools").BeginObject();
  for (const auto& [name, g] : r.pools) {
    w.Key(name);
    GroupJson(w, r, g);
  }
  w.EndObject().EndObject();
  return out + "\n";
}

}  // namespace gpusched
