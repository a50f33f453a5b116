// DraStore: the DRA ledger's objects of one kind (ResourceSlices, ResourceClaims or
// DeviceClasses: dra/dra_ledger.h) by key, kept as immutable entries that catalogs share. It is
// the one rule by which the ledger keeps, replaces, deletes and refuses the objects of every kind,
// so that a kind differs only in what it names below.
//
// Bounds: at most Kind::kMax entries are kept; an object under a new key past them is refused and
// counted (refused()). What the entries hold is counted in bytes() (claims: against
// kMaxDraClaimBytesTotal, dra/dra_entries.h), and the entries kept only in part in dropped().
//
// A kind (DraSliceKind, DraClaimKind, DraClassKind) names:
//   Entry           what one object is kept as (dra/dra_stored_slice.h, dra/dra_entries.h)
//   Table           its entries by key: Find(key), Put(key, entry) and Erase(key), each of the
//                   last two giving the entry it replaced or erased, Clear(), size()
//   kMax            how many entries are kept
//   kDevices        whether a change of the kind changes the devices the nodes offer
//   Key(ns, name)   an object's key: its name, or namespace/name for a namespaced kind
//   KeyOf(entry)    the key of an entry
//   Bytes(entry)    what it holds against the kind's byte budget (0: the kind has none)
//   Dropped(entry)  whether it was kept only in part
//
// Not thread-safe: the ledger's writer owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/dra/dra_claim_table.h"
#include "gpusched/dra/dra_entries.h"
#include "gpusched/dra/dra_stored_slice.h"

namespace gpusched {

// Entries by name, in name order (slices, classes).
template <class T>
class DraNamedTable {
 public:
  using Entry = std::shared_ptr<const T>;
  using Map = std::map<std::string, Entry, std::less<>>;

  const T* Find(std::string_view key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second.get();
  }
  Entry Put(std::string key, Entry entry) {
    auto it = entries_.try_emplace(std::move(key), nullptr).first;
    return std::exchange(it->second, std::move(entry));
  }
  Entry Erase(std::string_view key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    Entry old = std::move(it->second);
    entries_.erase(it);
    return old;
  }
  void Clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  const Map& entries() const { return entries_; }

 private:
  Map entries_;
};

// A cluster-scoped kind kept whole, without a byte budget: keyed by name.
struct DraWholeNamedKind {
  static std::string Key(std::string_view /*namespace_name*/, std::string_view name) {
    return std::string(name);
  }
  template <class Entry>
  static size_t Bytes(const Entry&) {
    return 0;
  }
  template <class Entry>
  static bool Dropped(const Entry&) {
    return false;
  }
};

struct DraSliceKind : DraWholeNamedKind {
  using Entry = DraStoredSlice;
  using Table = DraNamedTable<DraStoredSlice>;
  static constexpr size_t kMax = 100000;
  static constexpr bool kDevices = true;
  static std::string KeyOf(const Entry& slice) { return slice.name; }
};

struct DraClaimKind {
  using Entry = DraClaimEntry;
  using Table = DraClaimTable;
  static constexpr size_t kMax = 200000;
  static constexpr bool kDevices = false;
  static std::string Key(std::string_view namespace_name, std::string_view name) {
    return DraClaimKey(namespace_name, name);
  }
  static std::string KeyOf(const Entry& entry) {
    return DraClaimKey(entry.claim.namespace_name, entry.claim.name);
  }
  static size_t Bytes(const Entry& entry) { return entry.bytes; }
  static bool Dropped(const Entry& entry) { return !entry.requests_dropped.empty(); }
};

struct DraClassKind : DraWholeNamedKind {
  using Entry = DraClassEntry;
  using Table = DraNamedTable<DraClassEntry>;
  static constexpr size_t kMax = 1000;
  static constexpr bool kDevices = false;
  static std::string KeyOf(const Entry& entry) { return entry.device_class.name; }
};

template <class Kind>
class DraStore {
 public:
  using Entry = std::shared_ptr<const typename Kind::Entry>;

  // Whether an object under `key` may be kept (its key is known, or fewer than kMax are kept);
  // a refusal is counted when not.
  bool Admits(std::string_view key) {
    if (table_.Find(key) != nullptr || table_.size() < Kind::kMax) return true;
    ++refused_;
    return false;
  }
  // Keeps `entry` under its key, replacing the one there, unless Admits refuses it; whether kept.
  bool Put(Entry entry) {
    std::string key = Kind::KeyOf(*entry);
    if (!Admits(key)) return false;
    if (Kind::Dropped(*entry)) ++dropped_;
    bytes_ += Kind::Bytes(*entry);
    if (Entry old = table_.Put(std::move(key), std::move(entry))) bytes_ -= Kind::Bytes(*old);
    return true;
  }
  // Whether an entry was under `key`.
  bool Erase(std::string_view key) {
    Entry old = table_.Erase(key);
    if (old) bytes_ -= Kind::Bytes(*old);
    return old != nullptr;
  }
  // Every entry replaced by those of `entries`, each kept as Put keeps it.
  void Replace(std::vector<Entry> entries) {
    table_.Clear();
    bytes_ = 0;
    for (auto& entry : entries) Put(std::move(entry));
  }
  // What is left of `budget` for the entry under `key`: the bytes held but by the entry there.
  size_t BytesLeft(std::string_view key, size_t budget) const {
    const typename Kind::Entry* old = table_.Find(key);
    size_t held = bytes_ - (old != nullptr ? Kind::Bytes(*old) : 0);
    return held >= budget ? 0 : budget - held;
  }

  const typename Kind::Table& table() const { return table_; }
  typename Kind::Table& table() { return table_; }
  size_t size() const { return table_.size(); }
  size_t bytes() const { return bytes_; }
  uint64_t refused() const { return refused_; }  // since the store was made
  uint64_t dropped() const { return dropped_; }  // since the store was made

 private:
  typename Kind::Table table_;
  size_t bytes_ = 0;
  uint64_t refused_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace gpusched
