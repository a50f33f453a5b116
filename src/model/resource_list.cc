#include "gpusched/model/resource_list.h"

#include <algorithm>
#include <limits>

#include "gpusched/util/quantity.h"

namespace gpusched {
namespace {

bool NameLess(const ResourceAmount& a, std::string_view name) { return a.name < name; }

}  // namespace

ResourceList::ResourceList(std::initializer_list<ResourceAmount> amounts) {
  for (const auto& a : amounts) Add(a.name, a.milli);
}

std::vector<ResourceAmount>::iterator ResourceList::Find(std::string_view name) {
  return std::lower_bound(entries_.begin(), entries_.end(), name, NameLess);
}

const ResourceAmount* ResourceList::Lookup(std::string_view name) const {
  // Plugins look amounts up per node and request; most lists hold a handful of names that share
  // the "nvidia.com/" prefix, where comparing lengths first beats a binary search of compares.
  constexpr size_t kScanLimit = 16;
  if (entries_.size() <= kScanLimit) {
    for (const auto& e : entries_) {
      if (std::string_view(e.name) == name) return &e;
    }
    return nullptr;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name, NameLess);
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

int64_t ResourceList::milli(std::string_view name) const {
  const ResourceAmount* a = Lookup(name);
  return a ? a->milli : 0;
}

int64_t ResourceList::units(std::string_view name) const { return MilliToUnitsCeil(milli(name)); }

bool ResourceList::contains(std::string_view name) const { return Lookup(name) != nullptr; }

void ResourceList::Set(std::string_view name, int64_t milli) {
  auto it = Find(name);
  if (it != entries_.end() && it->name == name) {
    it->milli = milli;
  } else {
    entries_.insert(it, ResourceAmount{std::string(name), milli});
  }
}

void ResourceList::Add(std::string_view name, int64_t milli) {
  auto it = Find(name);
  if (it != entries_.end() && it->name == name) {
    // Amounts come from requests and saturate at the int64 range; so do their sums.
    if (__builtin_add_overflow(it->milli, milli, &it->milli)) {
      it->milli =
          milli > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
  } else {
    entries_.insert(it, ResourceAmount{std::string(name), milli});
  }
}

void ResourceList::Add(const ResourceList& other) {
  for (const auto& a : other) Add(a.name, a.milli);
}

void ResourceList::MaxWith(const ResourceList& other) {
  for (const auto& a : other) {
    auto it = Find(a.name);
    if (it != entries_.end() && it->name == a.name) {
      it->milli = std::max(it->milli, a.milli);
    } else {
      entries_.insert(it, a);
    }
  }
}

ResourceList ResourceList::Filtered(const std::function<bool(std::string_view)>& keep) const {
  ResourceList out;
  for (const auto& a : entries_) {
    if (keep(a.name)) out.entries_.push_back(a);
  }
  return out;
}

void ResourceList::DropZeros() {
  std::erase_if(entries_, [](const ResourceAmount& a) { return a.milli == 0; });
}

}  // namespace gpusched
