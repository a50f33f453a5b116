#include "gpusched/cluster/dra_ledger.h"

#include <utility>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {
namespace {

std::string ClaimKey(std::string_view namespace_name, std::string_view name) {
  std::string key(namespace_name);
  key += '/';
  key += name;
  return key;
}

const DraValue* Attribute(const DraDevice& device, std::string_view driver, std::string_view name) {
  std::string key(driver);
  key += '/';
  key += name;
  auto it = device.attributes.find(key);
  return it == device.attributes.end() ? nullptr : &it->second;
}

std::string_view TextAttribute(const DraDevice& device, std::string_view driver,
                               std::string_view name) {
  const DraValue* v = Attribute(device, driver, name);
  return v != nullptr && v->kind == DraValue::Kind::kString ? std::string_view(v->text) : "";
}

bool IsFullGpu(const DraDevice& d, std::string_view driver) {
  return TextAttribute(d, driver, "type") == "gpu";
}

bool IsMig(const DraDevice& d, std::string_view driver) {
  return TextAttribute(d, driver, "type") == "mig" && !TextAttribute(d, driver, "profile").empty();
}

// What tells kinds of devices apart for placement (DraCatalog::kinds).
std::string KindKey(const DraDevice& d, std::string_view driver, std::string_view resource) {
  std::string key(driver);
  for (std::string_view name :
       {"productName", "profile", "driverVersion", "cudaComputeCapability", "architecture"}) {
    key += '\0';
    key += TextAttribute(d, driver, name);
    if (const DraValue* v = Attribute(d, driver, name); v && v->kind == DraValue::Kind::kVersion) {
      key += v->text;
    }
  }
  key += '\0';
  key += resource;
  auto memory = d.capacity.find(std::string(driver) + "/memory");
  if (memory != d.capacity.end()) key += std::to_string(memory->second);
  return key;
}

}  // namespace

const DraClaim* DraCatalog::FindClaim(std::string_view namespace_name,
                                      std::string_view name) const {
  auto it = claims.find(ClaimKey(namespace_name, name));
  return it == claims.end() ? nullptr : &it->second;
}

const DraDeviceClass* DraCatalog::FindClass(std::string_view name) const {
  auto it = classes.find(name);
  return it == classes.end() ? nullptr : &it->second;
}

std::string DraProductLabel(std::string_view product_name) {
  std::string out(product_name);
  for (char& c : out) {
    if (c == ' ') c = '-';
  }
  return out;
}

void DraLedger::Changed(bool devices) {
  stale_ = true;
  devices_stale_ = devices_stale_ || devices;
  catalog_.reset();
}

const DraClaim* DraLedger::FindClaim(std::string_view namespace_name, std::string_view name) const {
  auto it = claims_.find(ClaimKey(namespace_name, name));
  return it == claims_.end() ? nullptr : &it->second;
}

const DraDeviceClass* DraLedger::FindClass(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

std::span<const DraDeviceKind> DraLedger::kinds() const {
  if (devices_stale_) RebuildDevices();
  return kinds_;
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
  std::string name = slice.name;
  bool kept = Keep(slices_, std::move(name), std::make_shared<const DraSlice>(std::move(slice)),
                   kMaxSlices, refused_.slices);
  if (kept) Changed(true);
  return kept;
}

void DraLedger::DeleteSlice(std::string_view name) {
  if (slices_.erase(std::string(name)) > 0) Changed(true);
}

void DraLedger::ReplaceSlices(std::vector<DraSlice> slices) {
  slices_.clear();
  for (auto& s : slices) UpsertSlice(std::move(s));
  Changed(true);
}

bool DraLedger::UpsertClaim(DraClaim claim) {
  std::string key = ClaimKey(claim.namespace_name, claim.name);
  bool kept = Keep(claims_, std::move(key), std::move(claim), kMaxClaims, refused_.claims);
  if (kept) Changed(false);
  return kept;
}

void DraLedger::DeleteClaim(std::string_view namespace_name, std::string_view name) {
  if (claims_.erase(ClaimKey(namespace_name, name)) > 0) Changed(false);
}

void DraLedger::ReplaceClaims(std::vector<DraClaim> claims) {
  claims_.clear();
  for (auto& c : claims) UpsertClaim(std::move(c));
  Changed(false);
}

bool DraLedger::UpsertClass(DraDeviceClass device_class) {
  std::string name = device_class.name;
  bool kept =
      Keep(classes_, std::move(name), std::move(device_class), kMaxClasses, refused_.classes);
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
  // The newest generation of each pool, and how many of its slices have arrived.
  struct Pool {
    int64_t generation = 0;
    int64_t expected = 1;
    int64_t arrived = 0;
  };
  std::map<std::pair<std::string, std::string>, Pool> pools;
  for (const auto& [name, s] : slices_) {
    Pool& p = pools[{s->driver, s->pool}];
    if (p.arrived == 0 || s->pool_generation > p.generation) {
      p = Pool{s->pool_generation, s->pool_slice_count, 0};
    }
    if (s->pool_generation == p.generation) ++p.arrived;
  }
  auto counted = [&](const DraSlice& s) {
    const Pool& p = pools.at({s.driver, s.pool});
    return s.driver == kNvidiaDraDriver && !s.node_name.empty() &&
           s.pool_generation == p.generation && p.arrived >= p.expected;
  };
  // Counter sets a full GPU consumes, per pool: MIG devices consuming one are its alternatives.
  std::map<std::pair<std::string, std::string>, std::set<std::string, std::less<>>> gpu_counters;
  for (const auto& [name, s] : slices_) {
    if (!counted(*s)) continue;
    for (const auto& d : s->devices) {
      if (!IsFullGpu(d, s->driver)) continue;
      for (const auto& [set, counters] : d.consumes) gpu_counters[{s->driver, s->pool}].insert(set);
    }
  }
  std::set<std::string> kind_keys;
  for (const auto& [name, s] : slices_) {
    if (!counted(*s)) continue;
    const auto& shared = gpu_counters[{s->driver, s->pool}];
    DraNodeView& view = offered_[s->node_name];
    for (const auto& d : s->devices) {
      // A device listed again by another slice of its pool is the same device (Kubernetes
      // identifies devices by driver, pool and name): counted once.
      auto key = std::make_tuple(s->driver, s->pool, d.name);
      if (slots_.contains(key)) continue;
      Slot slot{s->node_name, "", {}};
      for (const auto& [set, counters] : d.consumes) slot.counters.push_back(set);
      bool alternative = false;
      for (const auto& set : slot.counters) alternative = alternative || shared.count(set) > 0;
      if (IsFullGpu(d, s->driver)) {
        slot.resource = std::string(kGpuResource);
        view.allocatable.Add(kGpuResource, kMilliPerGpu);
        if (view.product.empty()) {
          view.product = DraProductLabel(TextAttribute(d, s->driver, "productName"));
        }
        auto memory = d.capacity.find(std::string(s->driver) + "/memory");
        if (view.memory_mib == 0 && memory != d.capacity.end()) {
          view.memory_mib = memory->second / 1000 / (int64_t{1} << 20);
        }
      } else if (IsMig(d, s->driver)) {
        // A MIG device of a partitionable GPU is an alternative to the GPU, counted with it.
        slot.resource =
            alternative
                ? std::string(kGpuResource)
                : std::string(kMigResourcePrefix).append(TextAttribute(d, s->driver, "profile"));
        if (!alternative) view.allocatable.Add(slot.resource, kMilliPerGpu);
      } else {
        continue;
      }
      if (kind_keys.insert(KindKey(d, s->driver, slot.resource)).second) {
        kinds_.push_back({s->driver, &d, slot.resource,
                          DraProductLabel(TextAttribute(d, s->driver, "productName"))});
      }
      slots_.emplace(std::move(key), std::move(slot));
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
  std::set<const Slot*> taken;
  std::map<std::string, std::set<std::string>> taken_counters;  // node -> counter sets taken
  for (const auto& [key, claim] : claims_) {
    if (!claim.allocated) continue;
    for (const auto& r : claim.results) {
      if (r.admin_access) continue;
      auto slot = slots_.find({r.driver, r.pool, r.device});
      if (slot == slots_.end() || !taken.insert(&slot->second).second) continue;
      const Slot& d = slot->second;
      bool counted_before = false;
      for (const auto& set : d.counters) {
        counted_before = counted_before || !taken_counters[d.node].insert(set).second;
      }
      auto view = views.find(d.node);
      if (!counted_before && view != views.end()) view->second.used.Add(d.resource, kMilliPerGpu);
    }
  }
  for (const auto& [name, view] : views) {
    auto old = views_.find(name);
    if (old == views_.end() || !(old->second == view)) dirty_nodes_.insert(name);
  }
  for (const auto& [name, view] : views_) {
    if (!views.count(name)) dirty_nodes_.insert(name);
  }
  views_ = std::move(views);
  auto catalog = std::make_shared<DraCatalog>();
  catalog->claims = claims_;
  catalog->classes = classes_;
  catalog->device_kinds = kinds_;
  for (const auto& [name, slice] : slices_) catalog->slices.push_back(slice);
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
