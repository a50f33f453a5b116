#include "gpusched/admission/platform_terms.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/platform_gpu_labels.h"
#include "gpusched/plugins/gpu_match.h"

namespace gpusched {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// GKE's MIG partition sizes (cloud.google.com/gke-gpu-partition-size values).
constexpr std::string_view kGkePartitions[] = {"1g.5gb",  "2g.10gb", "3g.20gb", "4g.20gb",
                                               "7g.40gb", "1g.10gb", "1g.20gb", "2g.20gb",
                                               "3g.40gb", "4g.40gb", "7g.80gb"};

// once per process: the tables are fixed, and a review must not parse hundreds of label sets.
template <class Value>
struct ReadTable {
  std::vector<std::pair<Value, GpuLabels>> rows;
};

// GKE: per partition size ("" for whole GPUs), every accelerator.
const std::vector<std::pair<std::string_view, ReadTable<std::string_view>>>& GkeTable() {
  static const auto table = [] {
    std::vector<std::pair<std::string_view, ReadTable<std::string_view>>> out;
    std::vector<std::string_view> partitions = {""};
    partitions.insert(partitions.end(), std::begin(kGkePartitions), std::end(kGkePartitions));
    for (std::string_view partition : partitions) {
      ReadTable<std::string_view> row;
      for (std::string_view a : KnownGkeAccelerators()) {
        Labels labels = {{kGkeAccelerator, a}};
        if (!partition.empty()) labels.emplace_back(kGkePartition, partition);
        row.rows.emplace_back(a, ParseGpuLabels(labels));
      }
      out.emplace_back(partition, std::move(row));
    }
    return out;
  }();
  return table;
}

// Karpenter: per GPU name, what a node reads as without a memory label and with a huge one (the
// larger variant, where the model comes in two sizes).
struct KarpenterRead {
  std::string_view name;
  GpuLabels bare, large;
};
const std::vector<KarpenterRead>& KarpenterTable() {
  static const auto table = [] {
    std::vector<KarpenterRead> out;
    std::string huge = std::to_string(kMaxGpuMemoryMib);
    const std::string prefix(kKarpenterPrefix);
    const std::string name_key = prefix + std::string(kInstanceGpuName);
    const std::string maker_key = prefix + std::string(kInstanceGpuManufacturer);
    const std::string memory_key = prefix + std::string(kInstanceGpuMemory);
    for (std::string_view n : KnownKarpenterGpuNames()) {
      Labels base = {{name_key, n}, {maker_key, "nvidia"}};
      Labels with_huge = base;
      with_huge.emplace_back(memory_key, huge);
      out.push_back({n, ParseGpuLabels(base), ParseGpuLabels(with_huge)});
    }
    return out;
  }();
  return table;
}

// The instance types of `types`, each read with `extra` labels beside it.
ReadTable<std::string_view> InstanceTypeTable(const std::vector<std::string_view>& types,
                                              const Labels& extra) {
  ReadTable<std::string_view> out;
  for (std::string_view type : types) {
    Labels labels = extra;
    labels.emplace_back(kInstanceType, type);
    out.rows.emplace_back(type, ParseGpuLabels(labels));
  }
  return out;
}

const ReadTable<std::string_view>& AksTable() {
  static const auto table = InstanceTypeTable(KnownAzureGpuSizes(), {{kAksAccelerator, "nvidia"}});
  return table;
}

const ReadTable<std::string_view>& Ec2Table() {
  static const auto table = InstanceTypeTable(KnownEc2GpuInstanceTypes(), {});
  return table;
}

// The values of `table` whose GPU passes `c`.
std::vector<std::string> Passing(const ReadTable<std::string_view>& table, const GpuCriteria& c) {
  std::vector<std::string> out;
  for (const auto& [value, facts] : table.rows) {
    if (c.Ok(facts)) out.emplace_back(value);
  }
  return out;
}

// GKE: accelerators by the partition size they are cut into ("" for whole GPUs), each pair judged
// through gpusched's reader.
std::vector<AffinityAlternative> Gke(const GpuCriteria& c) {
  std::map<std::vector<std::string>, std::vector<std::string>> partitions_by_accelerators;
  for (const auto& [partition, row] : GkeTable()) {
    std::vector<std::string> accelerators = Passing(row, c);
    if (!accelerators.empty()) {
      partitions_by_accelerators[accelerators].emplace_back(partition);
    }
  }
  AffinityAlternative guards = GfdAbsent(c);
  // Under MPS a GPU's memory is split between its clients; GKE's labels give no split to compare.
  if (c.min_memory_mib) guards.push_back(NotIn(kGkeSharing, {"mps"}));
  std::vector<AffinityAlternative> out;
  for (const auto& [accelerators, parts] : partitions_by_accelerators) {
    std::vector<std::string> sizes;
    bool whole = false;
    for (const std::string& p : parts) {
      if (p.empty()) {
        whole = true;
      } else {
        sizes.push_back(p);
      }
    }
    AffinityAlternative base = Plus(guards, {In(kGkeAccelerator, accelerators)});
    if (whole) out.push_back(Plus(base, {Absent(kGkePartition)}));
    if (!sizes.empty()) out.push_back(Plus(base, {In(kGkePartition, sizes)}));
  }
  return out;
}

// Karpenter (or EKS Auto Mode, `prefix`): per GPU name, the memory label's ranges that pass. A
// name whose memory label is absent reads the table's memory; a model sold in two sizes is the
// larger one when the label says more than 1.1x the smaller's memory.
std::vector<AffinityAlternative> Karpenter(const GpuCriteria& c, std::string_view prefix) {
  std::string name_key = std::string(prefix) + std::string(kInstanceGpuName);
  std::string memory_key = std::string(prefix) + std::string(kInstanceGpuMemory);
  std::string maker_key = std::string(prefix) + std::string(kInstanceGpuManufacturer);
  // A memory condition: label absent, or within [lo, hi] (hi 0: no upper end).
  struct Range {
    bool absent;
    int64_t lo, hi;
    bool operator<(const Range& o) const {
      return std::tie(absent, lo, hi) < std::tie(o.absent, o.lo, o.hi);
    }
  };
  std::map<std::vector<Range>, std::vector<std::string>> names_by_ranges;
  for (const auto& [n, bare, large] : KarpenterTable()) {
    std::vector<Range> ranges;
    if (c.Ok(bare)) ranges.push_back({true, 0, 0});
    int64_t floor = std::max<int64_t>(c.min_memory_mib.value_or(1), 1);
    if (large.product == bare.product) {
      if (c.ProductOk(bare.product)) ranges.push_back({false, floor, 0});
    } else {
      int64_t threshold = bare.memory_mib.value_or(0) * 11 / 10;
      if (c.ProductOk(bare.product) && floor <= threshold) {
        ranges.push_back({false, floor, threshold});
      }
      if (c.ProductOk(large.product)) ranges.push_back({false, std::max(floor, threshold + 1), 0});
    }
    if (!ranges.empty()) names_by_ranges[ranges].emplace_back(n);
  }
  AffinityAlternative guards = Plus(GfdAbsent(c), {Absent(kGkeAccelerator)});
  if (prefix == kEksAutoPrefix) {
    guards.push_back(Absent(std::string(kKarpenterPrefix) + std::string(kInstanceGpuName)));
    guards.push_back(Absent(std::string(kKarpenterPrefix) + std::string(kInstanceGpuCount)));
  }
  guards.push_back(In(maker_key, {"nvidia"}));
  std::vector<AffinityAlternative> out;
  for (const auto& [ranges, names] : names_by_ranges) {
    AffinityAlternative base = Plus(guards, {In(name_key, names)});
    // Any memory label, or none: the label does not matter.
    if (ranges.size() == 2 && ranges[0].absent && ranges[1].lo <= 1 && ranges[1].hi == 0) {
      out.push_back(std::move(base));
      continue;
    }
    for (const Range& r : ranges) {
      if (r.absent) {
        out.push_back(Plus(base, {Absent(memory_key)}));
        continue;
      }
      AffinityAlternative a = Plus(base, {Gt(memory_key, r.lo - 1)});
      if (r.hi > 0) a.push_back(Lt(memory_key, r.hi + 1));
      out.push_back(std::move(a));
    }
  }
  return out;
}

// A node named by its instance type alone (AKS's VM sizes, EC2's types for EKS nodes without
// Karpenter's labels): the types of `table` whose GPU passes, where neither Karpenter's nor GKE's
// labels decide, and AKS's accelerator label as `aks` requires it (present for AKS's sizes,
// absent for EC2's, which gpusched reads only off AKS).
std::vector<AffinityAlternative> ByInstanceType(const GpuCriteria& c,
                                                const ReadTable<std::string_view>& table,
                                                PinRequirement aks) {
  std::vector<std::string> types = Passing(table, c);
  if (types.empty()) return {};
  AffinityAlternative a = GfdAbsent(c);
  for (std::string_view prefix : {kKarpenterPrefix, kEksAutoPrefix}) {
    a.push_back(Absent(std::string(prefix) + std::string(kInstanceGpuName)));
    a.push_back(Absent(std::string(prefix) + std::string(kInstanceGpuCount)));
  }
  a.push_back(Absent(kGkeAccelerator));
  a.push_back(std::move(aks));
  a.push_back(In(kInstanceType, std::move(types)));
  return {std::move(a)};
}

}  // namespace

bool GpuCriteria::ProductOk(std::string_view product) const {
  if (!products) return true;
  return !product.empty() &&
         std::any_of(products->begin(), products->end(),
                     [&](const std::string& glob) { return ProductMatches(glob, product); });
}

bool GpuCriteria::Ok(const GpuLabels& g) const {
  return ProductOk(g.product) &&
         (!min_memory_mib || (g.memory_mib && *g.memory_mib >= *min_memory_mib));
}

PinRequirement In(std::string_view key, std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return PinRequirement{std::string(key), PinOperator::kIn, std::move(values), 0};
}
PinRequirement NotIn(std::string_view key, std::vector<std::string> values) {
  return PinRequirement{std::string(key), PinOperator::kNotIn, std::move(values), 0};
}
PinRequirement Absent(std::string_view key) {
  return PinRequirement{std::string(key), PinOperator::kDoesNotExist, {}, 0};
}
PinRequirement Gt(std::string_view key, int64_t bound) {
  return PinRequirement{std::string(key), PinOperator::kGt, {}, bound};
}
PinRequirement Lt(std::string_view key, int64_t bound) {
  return PinRequirement{std::string(key), PinOperator::kLt, {}, bound};
}

// The guards that leave a platform's alternative to nodes where GFD's labels do not decide.
AffinityAlternative GfdAbsent(const GpuCriteria& c) {
  AffinityAlternative out;
  if (c.products) out.push_back(Absent(kGfdProduct));
  if (c.min_memory_mib) out.push_back(Absent(kGfdMemory));
  return out;
}

AffinityAlternative Plus(AffinityAlternative a, const AffinityAlternative& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// What gpusched's reader makes of each label set a planned node of one platform may carry, read

std::vector<AffinityAlternative> PlatformAlternatives(const GpuCriteria& c,
                                                      const AffinityPlatforms& platforms) {
  std::vector<AffinityAlternative> out;
  auto add = [&out](std::vector<AffinityAlternative> more) {
    for (auto& a : more) out.push_back(std::move(a));
  };
  if (platforms.gke) add(Gke(c));
  if (platforms.karpenter) {
    add(Karpenter(c, kKarpenterPrefix));
    add(Karpenter(c, kEksAutoPrefix));
  }
  if (platforms.aks) add(ByInstanceType(c, AksTable(), In(kAksAccelerator, {"nvidia"})));
  if (platforms.eks) add(ByInstanceType(c, Ec2Table(), NotIn(kAksAccelerator, {"nvidia"})));
  return out;
}

}  // namespace gpusched
