#include "gpusched/planning/capacity_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

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

// A count of groups as the tables print it: a lower bound after ">=".
std::string GroupFitText(int64_t fit, bool capped) {
  return (capped ? ">=" : "") + std::to_string(fit);
}

// A row of a level's table: a domain's name, nodes, GPUs, free GPUs and groups per shape.
std::vector<std::string> DomainCells(const DomainCapacity& d,
                                     const std::vector<LevelGroupFit>& groups) {
  std::vector<std::string> row = {d.name, std::to_string(d.nodes), std::to_string(d.gpus),
                                  std::to_string(d.free_gpus)};
  for (size_t s = 0; s < groups.size(); ++s) {
    row.push_back(GroupFitText(d.fits[s], groups[s].capped));
  }
  return row;
}

// One level's table: its listed domains, their sum, the domains holding a group; then the largest.
std::string LevelText(const LevelCapacity& l) {
  if (l.domains == 0) {
    std::string keys;
    for (const auto& key : l.keys) keys += (keys.empty() ? "" : ", ") + QuoteForMessage(key);
    return l.level + ": no GPU node has a domain (keys: " + keys + ")\n";
  }
  std::vector<std::string> header = {"DOMAIN", "NODES", "GPUS", "FREE"};
  for (const auto& g : l.groups) header.push_back(g.shape.name());
  std::vector<std::vector<std::string>> rows = {std::move(header)};
  DomainCapacity all{"all", 0, 0, 0, {}};
  for (const DomainCapacity& d : l.top_domains) {
    rows.push_back(DomainCells(d, l.groups));
    all.nodes += d.nodes;
    all.gpus += d.gpus;
    all.free_gpus += d.free_gpus;
  }
  std::vector<std::string> fitting = {"domains fitting one", "", "", ""};
  std::string largest;
  for (const auto& g : l.groups) {
    all.fits.push_back(g.fit);
    fitting.push_back(std::to_string(g.domains_fitting));
    largest += (largest.empty() ? "largest: " : ", ") + g.shape.name() +
               (g.largest.empty()
                    ? " none"
                    : " in " + g.largest + " (" + GroupFitText(g.largest_fit, g.capped) + ")");
  }
  rows.push_back(DomainCells(all, l.groups));
  rows.push_back(std::move(fitting));
  return l.level + ": " + std::to_string(l.domains) +
         (l.domains == 1 ? " domain, " : " domains, ") + std::to_string(l.nodes_without_domain) +
         " GPU nodes in none\n" + AlignColumns(rows) + largest + "\n";
}

std::string TopologyText(const std::vector<LevelCapacity>& levels) {
  if (levels.empty()) return {};
  std::string out =
      "\npod groups inside one domain: NxG is N pods of G whole GPUs each; how many more such "
      "groups fit whole\ninside one domain of each topology level (gang-topology's levels), from "
      "the G-GPU fits of its nodes; FREE: unallocated whole GPUs (domains with the most first)\n";
  for (const auto& l : levels) out += "\n" + LevelText(l);
  return out;
}

void LevelJson(JsonWriter& w, const LevelCapacity& l) {
  w.BeginObject().Key("level").String(l.level).Key("keys").BeginArray();
  for (const auto& key : l.keys) w.String(key);
  w.EndArray().Key("domains").Int(static_cast<int64_t>(l.domains));
  w.Key("nodesWithoutDomain").Int(static_cast<int64_t>(l.nodes_without_domain));
  w.Key("groups").BeginArray();
  for (const auto& g : l.groups) {
    w.BeginObject().Key("shape").String(g.shape.name()).Key("pods").Int(g.shape.pods);
    w.Key("gpusPerPod").Int(g.shape.gpus_per_pod).Key("fit").Int(g.fit);
    w.Key("domainsFitting").Int(static_cast<int64_t>(g.domains_fitting)).Key("largest");
    if (g.largest.empty()) {
      w.Null();
    } else {
      w.BeginObject().Key("domain").String(g.largest).Key("fit").Int(g.largest_fit).EndObject();
    }
    if (g.capped) w.Key("capped").Bool(true);
    w.EndObject();
  }
  w.EndArray().Key("topDomains").BeginArray();
  for (const auto& d : l.top_domains) {
    w.BeginObject().Key("domain").String(d.name).Key("nodes").Int(static_cast<int64_t>(d.nodes));
    w.Key("gpus").Int(d.gpus).Key("freeGpus").Int(d.free_gpus).Key("fits").BeginObject();
    for (size_t s = 0; s < l.groups.size(); ++s) w.Key(l.groups[s].shape.name()).Int(d.fits[s]);
    w.EndObject().EndObject();
  }
  w.EndArray().EndObject();
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
  return out + TopologyText(r.topology);
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
  w.EndObject().Key("topology").BeginArray();
  for (const auto& l : r.topology) LevelJson(w, l);
  w.EndArray().EndObject();
  return out + "\n";
}

void CapacityGaugesOf(const CapacityReport& report, std::vector<GaugeRow>& gpus,
                      std::vector<GaugeRow>& fits, size_t max_products) {
  std::map<std::string, double> totals;
  for (const auto& [product, g] : report.products) totals[product] = g.gpus.total;
  const auto listed_as = TopOrOther(totals, max_products, kOtherProduct);
  // The gauge's groups: each kept product, then the sum of the rest.
  std::map<std::string, CapacityGroup> groups;
  for (const auto& [product, g] : report.products) {
    CapacityGroup& sum = groups[listed_as.at(product)];
    sum.gpus.total += g.gpus.total;
    sum.gpus.allocated += g.gpus.allocated;
    sum.gpus.idle += g.gpus.idle;
    sum.gpus.fragmented += g.gpus.fragmented;
    sum.fits.resize(std::max(sum.fits.size(), g.fits.size()), 0);
    for (size_t s = 0; s < g.fits.size(); ++s) sum.fits[s] += g.fits[s];
  }
  gpus.clear();
  fits.clear();
  for (const auto& [product, g] : groups) {
    gpus.push_back({product, "total", g.gpus.total});
    gpus.push_back({product, "allocated", g.gpus.allocated});
    gpus.push_back({product, "idle", g.gpus.idle});
    gpus.push_back({product, "fragmented", g.gpus.fragmented});
    for (size_t s = 0; s < report.shapes.size() && s < g.fits.size(); ++s) {
      fits.push_back({product, report.shapes[s].name, static_cast<double>(g.fits[s])});
    }
  }
}

}  // namespace gpusched
