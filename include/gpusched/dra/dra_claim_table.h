// DraClaimTable: the ResourceClaims by namespace/name, in shards that copies of the table share.
//
// A share (what each DRA catalog, and so each snapshot, holds) copies kShards pointers, not the
// claims: 50,000 claims published after every claim event would otherwise be copied each time.
// Once shared, a shard is never changed: the writer's next change to it copies that one shard
// (its entries' keys and pointers, never the claims) and changes the copy, in place from then on
// until the next share. Entries are immutable (dra/dra_entries.h).
//
// Thread-safety: one writer owns a table and hands it out through Share(); shares may be read,
// copied and destroyed on any thread meanwhile (they only read shards the writer no longer
// changes). Copying a table gives a table that owns no shard; copy only shares this way (a copy
// of the writer's own table would not stop the writer changing the shards it shares).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/dra/dra_entries.h"

namespace gpusched {

// A claim's key in the table: namespace/name.
std::string DraClaimKey(std::string_view namespace_name, std::string_view name);

class DraClaimTable {
 public:
  using Entry = std::shared_ptr<const DraClaimEntry>;

  DraClaimTable();
  DraClaimTable(const DraClaimTable& other);
  DraClaimTable& operator=(const DraClaimTable& other);

  // A copy for readers; from now on the writer copies a shard before changing it.
  DraClaimTable Share();

  // Keys are DraClaimKey's.
  const DraClaimEntry* Find(std::string_view key) const;
  // The entry under `key` replaced (or added); the one it replaced, if any.
  Entry Put(std::string key, Entry entry);
  // The entry removed, if any.
  Entry Erase(std::string_view key);
  void Clear();
  size_t size() const { return size_; }

  // `each(const DraClaimEntry&)` for every claim, in no particular order.
  template <class F>
  void ForEach(F&& each) const {
    for (const auto& shard : shards_) {
      for (const auto& [key, entry] : *shard) each(*entry);
    }
  }

 private:
  static constexpr size_t kShards = 64;
  using Shard = std::map<std::string, Entry, std::less<>>;

  static size_t ShardOf(std::string_view key);
  // Shard `i`, copied first unless this table owns it.
  Shard& Writable(size_t i);

  std::array<std::shared_ptr<Shard>, kShards> shards_;
  std::array<bool, kShards> owned_{};  // changed in place: no share holds it
  size_t size_ = 0;
};

}  // namespace gpusched
