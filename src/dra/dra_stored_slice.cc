#include "gpusched/dra/dra_stored_slice.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace gpusched {
namespace {

const DraValue* Attribute(const DraDevice& device, std::string_view driver, std::string_view name) {
  std::string key(driver);
  key += '/';
  key += name;
  auto it = device.attributes.find(key);
  return it == device.attributes.end() ? nullptr : &it->second;
}

}  // namespace

std::string_view DraTextAttribute(const DraDevice& device, std::string_view driver,
                                  std::string_view name) {
  const DraValue* v = Attribute(device, driver, name);
  return v != nullptr && v->kind == DraValue::Kind::kString ? std::string_view(v->text) : "";
}

std::string DraKindKey(std::string_view driver, const DraDevice& device) {
  std::string key(driver);
  for (std::string_view name : {"type", "productName", "profile", "driverVersion",
                                "cudaComputeCapability", "architecture"}) {
    key += '\0';
    if (const DraValue* v = Attribute(device, driver, name)) {
      key += static_cast<char>('0' + static_cast<int>(v->kind));
      key += v->kind == DraValue::Kind::kInt    ? std::to_string(v->int_value)
             : v->kind == DraValue::Kind::kBool ? std::to_string(v->bool_value)
                                                : v->text;
    }
  }
  key += '\0';
  auto memory = device.capacity.find(std::string(driver) + "/memory");
  if (memory != device.capacity.end()) key += std::to_string(memory->second);
  return key;
}

std::shared_ptr<const DraDevice> DraKindInterner::Intern(std::string_view driver,
                                                         DraDevice device) {
  std::string key = DraKindKey(driver, device);
  std::lock_guard lock(mu_);
  std::weak_ptr<const DraDevice>& slot = kinds_[key];
  if (auto held = slot.lock()) return held;
  device.consumes = {};  // amounts: placement reads only which sets a device consumes
  auto kind = std::make_shared<const DraDevice>(std::move(device));
  slot = kind;
  if (kinds_.size() >= sweep_at_) {
    std::erase_if(kinds_, [](const auto& entry) { return entry.second.expired(); });
    sweep_at_ = std::max<size_t>(1024, 2 * kinds_.size());
  }
  return kind;
}

size_t DraKindInterner::size() const {
  std::lock_guard lock(mu_);
  return kinds_.size();
}

std::vector<std::string_view> DraStoredSlice::SetsOf(const DraStoredDevice& device) const {
  std::vector<std::string_view> out;
  for (uint32_t i = 0; i < device.sets_count; ++i) {
    out.push_back(set_names[sets[device.sets_begin + i]]);
  }
  return out;
}

DraStoredSlice StoreSlice(DraSlice slice, DraKindInterner& kinds) {
  DraStoredSlice out{std::move(slice.name),
                     std::move(slice.driver),
                     std::move(slice.pool),
                     slice.pool_generation,
                     slice.pool_slice_count,
                     std::move(slice.node_name),
                     {},
                     {},
                     {}};
  out.devices.reserve(slice.devices.size());
  std::unordered_map<std::string, uint32_t> set_index;  // owns its keys: `d` goes
  for (auto& d : slice.devices) {
    // (The name copied: a new kind keeps its first device whole, name and all.)
    DraStoredDevice stored{d.name, nullptr, static_cast<uint32_t>(out.sets.size()),
                           static_cast<uint32_t>(d.consumes.size())};
    for (const auto& [set, counters] : d.consumes) {
      auto [it, added] = set_index.try_emplace(set, static_cast<uint32_t>(set_index.size()));
      if (added) out.set_names.push_back(set);
      out.sets.push_back(it->second);
    }
    stored.kind = kinds.Intern(out.driver, std::move(d));
    out.devices.push_back(std::move(stored));
  }
  out.devices.shrink_to_fit();
  out.set_names.shrink_to_fit();
  out.sets.shrink_to_fit();
  return out;
}

}  // namespace gpusched
