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
  return claims.Find(DraClaimKey(namespace_name, name));
}

const DraClassEntry* DraCatalog::FindClass(std::string_view name) const {
  return classes.Find(name);
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
  return Store<DraClaimKind>().table().Find(DraClaimKey(namespace_name, name));
}

const DraClassEntry* DraLedger::FindClass(std::string_view name) const {
  return Store<DraClassKind>().table().Find(name);
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

DraLedger::Refusals DraLedger::refused() const {
  return {Store<DraSliceKind>().refused(), Store<DraClaimKind>().refused(),
          Store<DraClassKind>().refused(), Store<DraClaimKind>().dropped(), kinds_refused_};
}

template <class Kind>
bool DraLedger::Keep(typename DraStore<Kind>::Entry entry) {
  bool kept = Store<Kind>().Put(std::move(entry));
  if (kept) Changed(Kind::kDevices);
  return kept;
}

bool DraLedger::Upsert(DraSlice slice) {
  return Upsert(StoreSlice(std::move(slice), *kinds_interner_));
}

bool DraLedger::Upsert(DraStoredSlice slice) {
  return Keep<DraSliceKind>(std::make_shared<const DraStoredSlice>(std::move(slice)));
}

bool DraLedger::Upsert(DraClaim claim) {
  auto& claims = Store<DraClaimKind>();
  std::string key = DraClaimKey(claim.namespace_name, claim.name);
  // Refused before its selectors are compiled. (Claims kept without requests may take the total
  // past the budget: nothing is left then.)
  if (!claims.Admits(key)) return false;
  size_t left = claims.BytesLeft(key, kMaxDraClaimBytesTotal);
  return Keep<DraClaimKind>(DraClaimEntry::Make(std::move(claim), left));
}

bool DraLedger::Upsert(DraDeviceClass device_class) {
  return Keep<DraClassKind>(DraClassEntry::Make(std::move(device_class)));
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
  const auto& slices = Store<DraSliceKind>().table().entries();
  for (const auto& [name, s] : slices) {
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
  for (const auto& [name, s] : slices) {
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
  for (const auto& [name, s] : slices) {
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
          ++kinds_refused_;
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
  Store<DraClaimKind>().table().ForEach([&](const DraClaimEntry& entry) {
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
  catalog->claims = Store<DraClaimKind>().table().Share();
  catalog->classes = Store<DraClassKind>().table();
  catalog->device_kinds = kinds_;
  catalog->device_kinds_cut = kinds_cut_;
  catalog->claim_bytes = Store<DraClaimKind>().bytes();
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
