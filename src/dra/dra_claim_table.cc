#include "gpusched/dra/dra_claim_table.h"

#include <functional>
#include <utility>

namespace gpusched {

DraClaimTable::DraClaimTable() { Clear(); }

DraClaimTable::DraClaimTable(const DraClaimTable& other)
    : shards_(other.shards_), size_(other.size_) {}

DraClaimTable& DraClaimTable::operator=(const DraClaimTable& other) {
  shards_ = other.shards_;
  owned_ = {};
  size_ = other.size_;
  return *this;
}

DraClaimTable DraClaimTable::Share() {
  owned_ = {};
  return *this;
}

std::string DraClaimKey(std::string_view namespace_name, std::string_view name) {
  std::string key(namespace_name);
  key += '/';
  key += name;
  return key;
}

size_t DraClaimTable::ShardOf(std::string_view key) {
  return std::hash<std::string_view>{}(key) % kShards;
}

DraClaimTable::Shard& DraClaimTable::Writable(size_t i) {
  if (!owned_[i]) {
    shards_[i] = std::make_shared<Shard>(*shards_[i]);
    owned_[i] = true;
  }
  return *shards_[i];
}

const DraClaimEntry* DraClaimTable::Find(std::string_view key) const {
  const Shard& shard = *shards_[ShardOf(key)];
  auto it = shard.find(key);
  return it == shard.end() ? nullptr : it->second.get();
}

DraClaimTable::Entry DraClaimTable::Put(std::string key, Entry entry) {
  Shard& shard = Writable(ShardOf(key));
  auto [it, added] = shard.try_emplace(std::move(key), nullptr);
  if (added) ++size_;
  return std::exchange(it->second, std::move(entry));
}

DraClaimTable::Entry DraClaimTable::Erase(std::string_view key) {
  size_t i = ShardOf(key);
  if (!shards_[i]->contains(key)) return nullptr;
  Shard& shard = Writable(i);
  auto it = shard.find(key);
  Entry old = std::move(it->second);
  shard.erase(it);
  --size_;
  return old;
}

void DraClaimTable::Clear() {
  for (auto& shard : shards_) shard = std::make_shared<Shard>();
  owned_.fill(true);
  size_ = 0;
}

}  // namespace gpusched
