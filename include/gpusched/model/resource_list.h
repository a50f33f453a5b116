// A set of named resource amounts (requests, capacity, usage), kept in milli-units.
//
// Small and sorted by name: nodes and pods carry a handful of entries, so a flat vector beats a
// map. Building from many names (FromAmounts) and combining two lists (Add, MaxWith) are
// near-linear, so a request with 100,000 resource names costs no more than its size: inserting
// one name at a time (Set, Add of one name) is for the few names of a node's usage. Value type;
// not synchronized.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

struct ResourceAmount {
  std::string name;
  int64_t milli = 0;
  bool operator==(const ResourceAmount&) const = default;
};

// Whether `name` is a native resource (cpu, memory, pods, ephemeral-storage, hugepages-*): every
// extended resource, GPU ones included, is named within a domain ("nvidia.com/gpu").
bool IsNativeResource(std::string_view name);

class ResourceList {
 public:
  ResourceList() = default;
  ResourceList(std::initializer_list<ResourceAmount> amounts);
  // The list of `amounts` in any order; of repeated names the last one counts (as in a JSON
  // object whose key repeats). O(n log n).
  static ResourceList FromAmounts(std::vector<ResourceAmount> amounts);

  // Amount of `name` in milli-units; 0 when absent.
  int64_t milli(std::string_view name) const;
  // Amount of `name` in whole units, rounded up.
  int64_t units(std::string_view name) const;
  bool contains(std::string_view name) const;
  // Amount of `name` in milli-units; nullopt when absent (one lookup for contains and milli).
  std::optional<int64_t> find(std::string_view name) const;

  void Set(std::string_view name, int64_t milli);
  void Add(std::string_view name, int64_t milli);
  // Per resource, adds `other` (saturating at the int64 range). Linear in both sizes.
  void Add(const ResourceList& other);
  // Per resource, keeps the larger of this and `other`. Linear in both sizes.
  void MaxWith(const ResourceList& other);
  // Per resource, keeps this amount and takes `other`'s for names this list lacks.
  void FillFrom(const ResourceList& other);
  // Keeps the entries whose name satisfies `keep`.
  ResourceList Filtered(const std::function<bool(std::string_view)>& keep) const;
  // Drops entries whose amount is zero.
  void DropZeros();

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  // Where the amounts are kept (null when there are none): for a prefetch, never to be read
  // through.
  const void* storage() const { return entries_.data(); }
  bool operator==(const ResourceList&) const = default;

 private:
  // Merges `other` in: `combine(mine, theirs)` where both have a name, theirs where only it has.
  template <class Combine>
  void Merge(const ResourceList& other, Combine combine);
  std::vector<ResourceAmount>::iterator Find(std::string_view name);
  const ResourceAmount* Lookup(std::string_view name) const;
  std::vector<ResourceAmount> entries_;
};

// `list` as people read it: "nvidia.com/gpu: 8, nvidia.com/mig-1g.10gb: 1", in name order, whole
// units (fractions to three decimals), names quoted for messages and cut at 96 bytes; "" when
// empty.
std::string FormatResourceList(const ResourceList& list);

}  // namespace gpusched
