#include "gpusched/model/resource_list.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

bool NameLess(const ResourceAmount& a, std::string_view name) { return a.name < name; }

uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint32_t Load4(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Whether `a` and `b` are equal. Resource names are short ("cpu", "nvidia.com/gpu"), and plugins
// look them up for every node: two overlapping word loads settle a name of 4 to 16 bytes without
// a call to memcmp, and shorter ones are compared byte by byte.
bool SameName(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8 && n <= 16) return Load8(x) == Load8(y) && Load8(x + n - 8) == Load8(y + n - 8);
  if (n >= 4 && n < 8) return Load4(x) == Load4(y) && Load4(x + n - 4) == Load4(y + n - 4);
  if (n < 4) return std::equal(x, x + n, y);
  return a == b;
}

}  // namespace

bool IsNativeResource(std::string_view name) { return name.find('/') == std::string_view::npos; }

ResourceList::ResourceList(std::initializer_list<ResourceAmount> amounts) {
  for (const auto& a : amounts) Add(a.name, a.milli);
}

ResourceList ResourceList::FromAmounts(std::vector<ResourceAmount> amounts) {
  std::stable_sort(
      amounts.begin(), amounts.end(),
      [](const ResourceAmount& a, const ResourceAmount& b) { return a.name < b.name; });
  ResourceList out;
  out.entries_.reserve(amounts.size());
  for (auto& a : amounts) {
    if (!out.entries_.empty() && out.entries_.back().name == a.name) {
      out.entries_.back().milli = a.milli;  // the later of a repeated name
    } else {
      out.entries_.push_back(std::move(a));
    }
  }
  return out;
}

template <class Combine>
void ResourceList::Merge(const ResourceList& other, Combine combine) {
  if (other.entries_.empty()) return;
  std::vector<ResourceAmount> merged;
  merged.reserve(entries_.size() + other.entries_.size());
  auto mine = entries_.begin();
  auto theirs = other.entries_.begin();
  while (mine != entries_.end() || theirs != other.entries_.end()) {
    if (theirs == other.entries_.end() || (mine != entries_.end() && mine->name < theirs->name)) {
      merged.push_back(std::move(*mine++));
    } else if (mine == entries_.end() || theirs->name < mine->name) {
      merged.push_back(*theirs++);
    } else {
      mine->milli = combine(mine->milli, theirs->milli);
      merged.push_back(std::move(*mine++));
      ++theirs;
    }
  }
  entries_ = std::move(merged);
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
      if (SameName(e.name, name)) return &e;
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

std::optional<int64_t> ResourceList::find(std::string_view name) const {
  const ResourceAmount* a = Lookup(name);
  return a ? std::optional<int64_t>(a->milli) : std::nullopt;
}

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
    it->milli = SaturatingAdd(it->milli, milli);  // amounts saturate at the int64 range
  } else {
    entries_.insert(it, ResourceAmount{std::string(name), milli});
  }
}

void ResourceList::Add(const ResourceList& other) { Merge(other, SaturatingAdd); }

void ResourceList::MaxWith(const ResourceList& other) {
  Merge(other, [](int64_t a, int64_t b) { return std::max(a, b); });
}

void ResourceList::FillFrom(const ResourceList& other) {
  Merge(other, [](int64_t mine, int64_t) { return mine; });
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

std::string FormatResourceList(const ResourceList& list) {
  std::string out;
  for (const auto& r : list) {
    if (!out.empty()) out += ", ";
    out += QuoteForMessage(r.name, 96) + ": ";
    if (r.milli % 1000 == 0) {
      out += std::to_string(r.milli / 1000);
    } else {
      char units[32];
      std::snprintf(units, sizeof units, "%.3f", static_cast<double>(r.milli) / 1000);
      out += units;
    }
  }
  return out;
}

}  // namespace gpusched
