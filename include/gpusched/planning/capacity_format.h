// The capacity report (gpusched/planning/capacity.h) as `gpusched capacity` prints it: a table per
// grouping, or one JSON object (also served by GET /capacity), and the GPU figures as every
// planning report prints them, and its gauges as the reports worker writes them. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/planning/capacity.h"
#include "gpusched/planning/report_rows.h"

namespace gpusched {

// A GPU figure as the reports print it: up to two decimals, trailing zeros dropped (12, 2.5, 0.14).
std::string FormatGpus(double v);

// A table per grouping (products, then pools), then the cluster's line, then a table per topology
// level of the pod groups fitting inside one domain; every name from the inventory quoted, so a
// label cannot start a line of its own or reach the terminal as an escape.
std::string FormatCapacityText(const CapacityReport& report);
// One JSON object: {"inventory", "policy", "profile", "shapes": [...], "cluster": G, "products":
// {name: G}, "poolLabel", "pools": {value: G}, "topology": [L...]}, G = {"nodes", "gpus":
// {"total", "allocated", "idle", "fragmented"[, "sharedReplicas", "sharedAllocated"][,
// "migSlices", "migSlicesAllocated"]}, "fits": {shape: N}[, "capped": [shape...]]}, L = {"level",
// "keys", "domains", "nodesWithoutDomain", "groups": [{"shape": "NxG", "pods", "gpusPerPod",
// "fit", "domainsFitting", "largest": {"domain", "fit"} or null[, "capped": true]}],
// "topDomains": [{"domain", "nodes", "gpus", "freeGpus", "fits": {"NxG": N}}]}.
std::string FormatCapacityJson(const CapacityReport& report);

// Products with a label of their own in the capacity gauges; the others are summed as
// kOtherProduct, so a gauge has at most (kMaxGaugeProducts + 1) x shapes series.
inline constexpr size_t kMaxGaugeProducts = 32;
inline constexpr std::string_view kOtherProduct = "other";

// The gauges gpusched_capacity_gpus{product,state} and gpusched_capacity_fits{product,shape} of
// `report` (GaugeRow: the product, then the state or shape): the `max_products` products with the
// most GPUs (TopOrOther) by name, the rest summed under kOtherProduct.
void CapacityGaugesOf(const CapacityReport& report, std::vector<GaugeRow>& gpus,
                      std::vector<GaugeRow>& fits, size_t max_products = kMaxGaugeProducts);

}  // namespace gpusched
