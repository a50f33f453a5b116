#include "gpusched/dra/dra_ledger.h"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <utility>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

bool IsFullGpu(const DraDevice& d, std::string_view driver) {
  return DraTextAttribute(d, driver, "type") == "gpu";
}

bool IsMig(const DraDevice& d, std::string_view driver) {
  return DraTextAttribute(d, driver, "type") == "mig" &&
         !DraTextAttribute(d, driver, "profile").empty();
}

}  // namespace

const DraClaimEntry* DraCatalog::FindClaim(std::string_view namespace_name,
                                           std::string_view name) const {
  return claims.Find(namespace_name, name);
}

const DraClassEntry* DraCatalog::FindClass(std::string_view name) const {
  auto it = classes.find(name);
  return it == classes.end() ? nullptr : it->second.get();
}

std::string DraProductLabel(std::string_view product_name) {
  std::string out(product_name);
  for (char& c : out) {
    if (c == ' ') c = '-';
  }
  return out;
}

DraLedger::DraLedger() : kinds_interner_(std::make_shared<DraKindInterner>()) {}

size_t DraLedger::DeviceIdHash::operator()(const DeviceId& id) const {
  std::hash<std::string_view> h;
  return h(id.device) ^ (h(id.pool) * 31) ^ (h(id.driver) * 1000003);
}

void DraLedger::Changed(bool devices) {
  stale_ = true;
  ++version_;
  if (devices) {
    devices_stale_ = true;
    slots_.clear();  // they point into slices that may be gone
  }
  catalog_.reset();
}

const DraClaimEntry* DraLedger::FindClaim(std::string_view namespace_name,
                                          std::string_view name) const {
  return claims_.Find(namespace_name, name);
}

const DraClassEntry* DraLedger::FindClass(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : it->second.get();
}

std::span<const DraDeviceKind> DraLedger::kinds() const {
  if (devices_stale_) RebuildDevices();
  return kinds_;
}

bool DraLedger::kinds_cut() const {
  if (devices_stale_) RebuildDevices();
  return kinds_cut_;
}

size_t DraLedger::device_count() const {
  if (devices_stale_) RebuildDevices();
  return slots_.size();
}

namespace {

// Keeps `value` under `key` in `map`, unless a new key would pass `max` entries (then counted in
// `refused`); whether it did.
template <class Map, class Value>
bool Keep(Map& map, std::string key, Value value, size_t max, uint64_t& refused) {
  if (!map.contains(key) && map.size() >= max) {
    ++refused;
    return false;
  }
  map.insert_or_assign(std::move(key), std::move(value));
  return true;
}

}  // namespace

bool DraLedger::UpsertSlice(DraSlice slice) {
  return UpsertSlice(StoreSlice(std::move(slice), *kinds_interner_));
}

bool DraLedger::UpsertSlice(DraStoredSlice slice) {
  std::string name = slice.name;
  bool kept =
      Keep(slices_, std::move(name), std::make_shared<const DraStoredSlice>(std::move(slice)),
           kMaxSlices, refused_.slices);
  if (kept) Changed(true);
  return kept;
}

void DraLedger::DeleteSlice(std::string_view name) {
  if (slices_.erase(std::string(name)) > 0) Changed(true);
}

void DraLedger::ReplaceSlices(std::vector<DraStoredSlice> slices) {
  slices_.clear();
  Changed(true);
  for (auto& s : slices) UpsertSlice(std::move(s));
}

void DraLedger::ReplaceSlices(std::vector<DraSlice> slices) {
  slices_.clear();
  Changed(true);
  for (auto& s : slices) UpsertSlice(std::move(s));
}

bool DraLedger::UpsertClaim(DraClaim claim) {
  const DraClaimEntry* old = claims_.Find(claim.namespace_name, claim.name);
  if (old == nullptr && claims_.size() >= kMaxClaims) {
    ++refused_.claims;
    return false;
  }
  size_t held = claim_bytes_ - (old != nullptr ? old->bytes : 0);
  // (Claims kept without requests may take the total past the budget: nothing is left then.)
  auto entry = DraClaimEntry::Make(
      std::move(claim), held >= kMaxDraClaimBytesTotal ? 0 : kMaxDraClaimBytesTotal - held);
  if (!entry->requests_dropped.empty()) ++refused_.claim_bytes;
  claim_bytes_ = held + entry->bytes;
  claims_.Put(std::move(entry));
  Changed(false);
  return true;
}

void DraLedger::DeleteClaim(std::string_view namespace_name, std::string_view name) {
  if (auto old = claims_.Erase(namespace_name, name)) {
    claim_bytes_ -= old->bytes;
    Changed(false);
  }
}

void DraLedger::ReplaceClaims(std::vector<std::shared_ptr<const DraClaimEntry>> claims) {
  claims_.Clear();
  claim_bytes_ = 0;
  for (auto& entry : claims) {
    const DraClaim& c = entry->claim;
    if (claims_.Find(c.namespace_name, c.name) == nullptr && claims_.size() >= kMaxClaims) {
      ++refused_.claims;
      continue;
    }
    if (!entry->requests_dropped.empty()) ++refused_.claim_bytes;
    claim_bytes_ += entry->bytes;
    if (auto old = claims_.Put(std::move(entry))) claim_bytes_ -= old->bytes;
  }
  Changed(false);
}

void DraLedger::ReplaceClaims(std::vector<DraClaim> claims) {
  claims_.Clear();
  claim_bytes_ = 0;
  for (auto& c : claims) UpsertClaim(std::move(c));
  Changed(false);
}

bool DraLedger::UpsertClass(DraDeviceClass device_class) {
  std::string name = device_class.name;
  bool kept = Keep(classes_, std::move(name), DraClassEntry::Make(std::move(device_class)),
                   kMaxClasses, refused_.classes);
  if (kept) Changed(false);
  return kept;
}

void DraLedger::DeleteClass(std::string_view name) {
  if (classes_.erase(std::string(name)) > 0) Changed(false);
}

void DraLedger::ReplaceClasses(std::vector<DraDeviceClass> classes) {
  classes_.clear();
  for (auto& c : classes) UpsertClass(std::move(c));
  Changed(false);
}

void DraLedger::RebuildDevices() const {
  offered_.clear();
  slots_.clear();
  kinds_.clear();
  kinds_cut_ = false;
  // The newest generation of each pool, and how many of its slices have arrived.
  struct Pool {
    int64_t generation = 0;
    int64_t expected = 1;
    int64_t arrived = 0;
  };
  using PoolId = std::pair<std::string_view, std::string_view>;  // driver, pool
  std::map<PoolId, Pool> pools;
  for (const auto& [name, s] : slices_) {
    Pool& p = pools[{s->driver, s->pool}];
    if (p.arrived == 0 || s->pool_generation > p.generation) {
      p = Pool{s->pool_generation, s->pool_slice_count, 0};
    }
    if (s->pool_generation == p.generation) ++p.arrived;
  }
  auto counted = [&](const DraStoredSlice& s) {
    const Pool& p = pools.at({s.driver, s.pool});
    return s.driver == kNvidiaDraDriver && !s.node_name.empty() &&
           s.pool_generation == p.generation && p.arrived >= p.expected;
  };
  // Counter sets a full GPU consumes, per pool: MIG devices consuming one are its alternatives.
  std::map<PoolId, std::set<std::string_view>> gpu_counters;
  for (const auto& [name, s] : slices_) {
    if (!counted(*s)) continue;
    for (const auto& d : s->devices) {
      if (!IsFullGpu(*d.kind, s->driver)) continue;
      for (std::string_view set : s->SetsOf(d)) gpu_counters[{s->driver, s->pool}].insert(set);
    }
  }
  resources_ = {std::string(kGpuResource)};
  auto resource_index = [&](std::string name) {
    auto it = std::find(resources_.begin(), resources_.end(), name);
    if (it == resources_.end()) it = resources_.insert(resources_.end(), std::move(name));
    return static_cast<uint32_t>(it - resources_.begin());
  };
  std::set<std::pair<const DraDevice*, uint32_t>> kinds_seen;
  for (const auto& [name, s] : slices_) {
    if (!counted(*s)) continue;
    const auto& shared = gpu_counters[{s->driver, s->pool}];
    DraNodeView& view = offered_[s->node_name];
    for (const auto& d : s->devices) {
      // A device listed again by another slice of its pool is the same device (Kubernetes
      // identifies devices by driver, pool and name): counted once.
      DeviceId id{s->driver, s->pool, d.name};
      if (slots_.contains(id)) continue;
      const DraDevice& kind = *d.kind;
      bool alternative = false;
      for (std::string_view set : s->SetsOf(d)) alternative = alternative || shared.count(set) > 0;
      uint32_t resource = 0;
      if (IsFullGpu(kind, s->driver)) {
        view.allocatable.Add(kGpuResource, kMilliPerGpu);
        if (view.product.empty()) {
          view.product = DraProductLabel(DraTextAttribute(kind, s->driver, "productName"));
        }
        auto memory = kind.capacity.find(s->driver + "/memory");
        if (view.memory_mib == 0 && memory != kind.capacity.end()) {
          view.memory_mib = memory->second / 1000 / (int64_t{1} << 20);
        }
      } else if (IsMig(kind, s->driver)) {
        // A MIG device of a partitionable GPU is an alternative to the GPU, counted with it.
        if (!alternative) {
          resource = resource_index(
              std::string(kMigResourcePrefix).append(DraTextAttribute(kind, s->driver, "profile")));
          view.allocatable.Add(resources_[resource], kMilliPerGpu);
        }
      } else {
        continue;
      }
      if (kinds_seen.emplace(d.kind.get(), resource).second) {
        if (kinds_.size() < kMaxDeviceKinds) {
          kinds_.push_back({s->driver, d.kind, resources_[resource],
                            DraProductLabel(DraTextAttribute(kind, s->driver, "productName"))});
        } else {
          kinds_cut_ = true;
          ++refused_.kinds;
        }
      }
      slots_.emplace(id, Slot{s.get(), &d, resource});
    }
  }
  for (auto it = offered_.begin(); it != offered_.end();) {
    it = it->second.allocatable.empty() ? offered_.erase(it) : std::next(it);
  }
  devices_stale_ = false;
}

void DraLedger::Rebuild() {
  if (devices_stale_) RebuildDevices();
  std::map<std::string, DraNodeView, std::less<>> views = offered_;
  // What allocated claims hold: a device once however often results name it (Kubernetes keeps
  // the allocated devices as a set), a partitionable GPU once however many of its devices are
  // taken.
  std::unordered_set<const DraStoredDevice*> taken;
  std::set<std::pair<std::string_view, std::string_view>> taken_counters;  // node, counter set
  claims_.ForEach([&](const DraClaimEntry& entry) {
    if (!entry.claim.allocated) return;
    for (const auto& r : entry.claim.results) {
      if (r.admin_access) continue;
      auto slot = slots_.find({r.driver, r.pool, r.device});
      if (slot == slots_.end() || !taken.insert(slot->second.device).second) continue;
      const Slot& d = slot->second;
      const std::string& node = d.slice->node_name;
      bool counted_before = false;
      for (std::string_view set : d.slice->SetsOf(*d.device)) {
        counted_before = counted_before || !taken_counters.emplace(node, set).second;
      }
      auto view = views.find(node);
      if (!counted_before && view != views.end()) {
        view->second.used.Add(resources_[d.resource], kMilliPerGpu);
      }
    }
  });
  for (const auto& [name, view] : views) {
    auto old = views_.find(name);
    if (old == views_.end() || !(old->second == view)) dirty_nodes_.insert(name);
  }
  for (const auto& [name, view] : views_) {
    if (!views.count(name)) dirty_nodes_.insert(name);
  }
  views_ = std::move(views);
  auto catalog = std::make_shared<DraCatalog>();
  catalog->claims = claims_.Share();
  catalog->classes = classes_;
  catalog->device_kinds = kinds_;
  catalog->device_kinds_cut = kinds_cut_;
  catalog->claim_bytes = claim_bytes_;
  catalog->device_count = slots_.size();
  catalog_ = std::move(catalog);
  stale_ = false;
}

std::set<std::string, std::less<>> DraLedger::TakeDirtyNodes() {
  if (stale_) Rebuild();
  return std::exchange(dirty_nodes_, {});
}

const std::map<std::string, DraNodeView, std::less<>>& DraLedger::NodeViews() {
  if (stale_) Rebuild();
  return views_;
}

std::shared_ptr<const DraCatalog> DraLedger::Catalog() {
  if (stale_ || !catalog_) Rebuild();
  return catalog_;
}

}  // namespace gpusched
