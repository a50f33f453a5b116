// A set of named resource amounts (requests, capacity, usage), kept in milli-units.
//
// Small and sorted by name: nodes and pods carry a handful of entries, so a flat vector beats a
// map. Value type; not synchronized.
#ifndef GPUSCHED_MODEL_RESOURCE_LIST_H_
#define GPUSCHED_MODEL_RESOURCE_LIST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

struct ResourceAmount {
  std::string name;
  int64_t milli = 0;
  bool operator==(const ResourceAmount&) const = default;
};

class ResourceList {
 public:
  ResourceList() = default;
  ResourceList(std::initializer_list<ResourceAmount> amounts);

  // Amount of `name` in milli-units; 0 when absent.
  int64_t milli(std::string_view name) const;
  // Amount of `name` in whole units, rounded up.
  int64_t units(std::string_view name) const;
  bool contains(std::string_view name) const;

  void Set(std::string_view name, int64_t milli);
  void Add(std::string_view name, int64_t milli);
  void Add(const ResourceList& other);
  // Per resource, keeps the larger of this and `other`.
  void MaxWith(const ResourceList& other);
  // Keeps the entries whose name satisfies `keep`.
  ResourceList Filtered(const std::function<bool(std::string_view)>& keep) const;
  // Drops entries whose amount is zero.
  void DropZeros();

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  bool operator==(const ResourceList&) const = default;

 private:
  std::vector<ResourceAmount>::iterator Find(std::string_view name);
  const ResourceAmount* Lookup(std::string_view name) const;
  std::vector<ResourceAmount> entries_;
};

}  // namespace gpusched

#endif  // GPUSCHED_MODEL_RESOURCE_LIST_H_
