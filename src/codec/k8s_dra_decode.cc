#include "gpusched/codec/k8s_dra_decode.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/codec/ondemand_types.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
// A namespace of its own: the codec layer may be compiled as one unit (GPUSCHED_UNITY_BUILD).
namespace dra_decode {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

constexpr int64_t kMaxDraCount = int64_t{1} << 31;

std::string Count(size_t n) { return std::to_string(n); }

// One of the bounds of dra/dra.h and codec/k8s_dra_decode.h, and the reason an object past it
// is counted under (DecodeError::bound).
struct Bound {
  size_t max;
  const char* reason;
  // Throws: more than `max` `what`.
  [[noreturn]] void Passed(std::string_view what) const {
    throw DecodeError("more than " + Count(max) + " " + std::string(what), reason);
  }
};
constexpr Bound kDevicesBound{kMaxDraDevicesPerSlice, "dra_devices_per_slice"};
constexpr Bound kAttributesBound{kMaxDraAttributesPerDevice, "dra_attributes_per_device"};
constexpr Bound kCountersBound{kMaxDraCountersPerSlice, "dra_counters_per_slice"};
constexpr Bound kRequestsBound{kMaxDraRequestsPerClaim, "dra_requests_per_claim"};
constexpr Bound kListBound{kMaxDraListEntries, "dra_list_entries"};
constexpr Bound kSelectorBound{kMaxDraSelectorBytes, "dra_selector_bytes"};

// Calls `each` on every entry of the list `v` (null: none), each in the context of its index;
// past the bound's entries, throws.
template <class F>
void ForEach(value v, const Bound& bound, F&& each) {
  if (IsNull(v)) return;
  size_t index = 0;
  for (value item : v.get_array()) {
    if (index == bound.max) bound.Passed("entries");
    WithContext("[" + Count(index++) + "]", [&] { each(item); });
  }
}

// An integer written as a JSON number (or a string of one); nullopt for null.
std::optional<int64_t> Integer(value v) {
  if (IsNull(v)) return std::nullopt;
  std::string_view text = ScalarText(v);
  std::optional<int64_t> n = ParsePinInteger(text);
  if (!n) throw DecodeError("not an integer: \"" + QuoteForMessage(text, 64) + "\"");
  return n;
}

int64_t Within(std::optional<int64_t> n, int64_t low, int64_t high, int64_t absent) {
  if (!n) return absent;
  if (*n < low || *n > high) {
    throw DecodeError(std::to_string(*n) + " outside " + std::to_string(low) + ".." +
                      std::to_string(high));
  }
  return *n;
}

bool Boolean(value v) {
  if (IsNull(v)) return false;
  if (v.type() != json_type::boolean) throw DecodeError("not a boolean");
  return v.get_bool();
}

// `{value: quantity}` as milli-units; a quantity that does not parse, or is negative, throws.
int64_t Quantity(value v) {
  std::optional<int64_t> milli;
  ForFields(v, [&](std::string_view key, value q) {
    if (key != "value") return;
    std::string_view text = ScalarText(q);
    milli = ParseQuantityMilli(text);
    if (!milli) throw DecodeError("invalid quantity \"" + QuoteForMessage(text, 64) + "\"");
    if (*milli < 0) throw DecodeError("negative quantity \"" + QuoteForMessage(text, 64) + "\"");
  });
  if (!milli) throw DecodeError("no value");
  return *milli;
}

// Counter sets and counters left to a slice (kMaxDraCountersPerSlice).
struct CounterBudget {
  size_t left = kMaxDraCountersPerSlice;
  void Charge() {
    if (left == 0) kCountersBound.Passed("counters");
    --left;
  }
};

// `{name: {value: quantity}}`.
std::map<std::string, int64_t, std::less<>> Counters(value v, CounterBudget& budget) {
  std::map<std::string, int64_t, std::less<>> out;
  ForFields(v, [&](std::string_view name, value c) {
    budget.Charge();
    if (!out.emplace(name, Quantity(c)).second) throw DecodeError("duplicate counter");
  });
  return out;
}

// One entry of sharedCounters ({name, counters}) or consumesCounters ({counterSet, counters}),
// added to `into`.
void CounterSet(value v, std::string_view name_key, CounterBudget& budget, DraCounters& into) {
  budget.Charge();
  std::string name;
  std::map<std::string, int64_t, std::less<>> counters;
  ForFields(v, [&](std::string_view key, value x) {
    if (key == name_key) name = ScalarText(x);
    if (key == "counters") counters = Counters(x, budget);
  });
  if (!into.emplace(std::move(name), std::move(counters)).second) {
    throw DecodeError("duplicate counter set");
  }
}

// One attribute value: exactly one of int, bool, string and version (null fields are unset).
DraValue Attribute(value v) {
  DraValue out;
  int kinds = 0;
  ForFields(v, [&](std::string_view key, value x) {
    if (IsNull(x)) return;
    if (key == "int") {
      if (x.type() != json_type::number) throw DecodeError("not an integer");
      out.kind = DraValue::Kind::kInt;
      out.int_value = x.get_int64();
    } else if (key == "bool") {
      out.kind = DraValue::Kind::kBool;
      out.bool_value = Boolean(x);
    } else if (key == "string" || key == "version") {
      if (x.type() != json_type::string) throw DecodeError("not a string");
      out.kind = key == "string" ? DraValue::Kind::kString : DraValue::Kind::kVersion;
      out.text = std::string_view(x.get_string());
    } else {
      return;
    }
    ++kinds;
  });
  if (kinds != 1) {
    throw DecodeError("expected exactly one of int, bool, string and version, found " +
                      std::to_string(kinds));
  }
  return out;
}

DraDevice Device(value v, CounterBudget& budget) {
  DraDevice device;
  size_t entries = 0;  // attributes and capacities
  auto charge = [&] {
    if (++entries > kAttributesBound.max) kAttributesBound.Passed("attributes and capacities");
  };
  ForFields(v, [&](std::string_view key, value x) {
    if (key == "name") {
      device.name = ScalarText(x);
    } else if (key == "attributes") {
      ForFields(x, [&](std::string_view name, value a) {
        charge();
        if (!device.attributes.emplace(name, Attribute(a)).second) {
          throw DecodeError("duplicate attribute");
        }
      });
    } else if (key == "capacity") {
      ForFields(x, [&](std::string_view name, value c) {
        charge();
        if (!device.capacity.emplace(name, Quantity(c)).second) {
          throw DecodeError("duplicate capacity");
        }
      });
    } else if (key == "consumesCounters") {
      ForEach(x, kCountersBound,
              [&](value c) { CounterSet(c, "counterSet", budget, device.consumes); });
    }
  });
  return device;
}

// The names of `map` written without a domain, qualified with `driver`'s.
template <class Map>
void Qualify(Map& map, std::string_view driver, std::string_view what) {
  Map out;
  while (!map.empty()) {
    auto node = map.extract(map.begin());
    if (node.key().find('/') == std::string::npos)
      node.key() = std::string(driver) + "/" + node.key();
    std::string name = node.key();
    if (!out.insert(std::move(node)).inserted) {
      throw DecodeError(std::string(what) + ": duplicate name \"" + QuoteForMessage(name, 128) +
                        "\" once qualified");
    }
  }
  map = std::move(out);
}

void SliceSpec(value v, DraSlice& slice) {
  CounterBudget budget;
  ForFields(v, [&](std::string_view key, value x) {
    if (key == "driver") {
      slice.driver = ScalarText(x);
    } else if (key == "nodeName") {
      slice.node_name = ScalarText(x);
    } else if (key == "pool") {
      ForFields(x, [&](std::string_view pkey, value p) {
        if (pkey == "name") slice.pool = ScalarText(p);
        if (pkey == "generation") {
          slice.pool_generation = Within(Integer(p), 0, INT64_MAX, 0);
        }
        if (pkey == "resourceSliceCount") {
          slice.pool_slice_count = Within(Integer(p), 1, kMaxDraCount, 1);
        }
      });
    } else if (key == "devices") {
      ForEach(x, kDevicesBound, [&](value d) { slice.devices.push_back(Device(d, budget)); });
    } else if (key == "sharedCounters") {
      ForEach(x, kCountersBound,
              [&](value c) { CounterSet(c, "name", budget, slice.shared_counters); });
    }
  });
}

std::vector<std::string> Selectors(value v) {
  std::vector<std::string> out;
  ForEach(v, kListBound, [&](value s) {
    std::optional<std::string> expression;
    ForFields(s, [&](std::string_view key, value cel) {
      if (key != "cel") return;
      ForFields(cel, [&](std::string_view ckey, value e) {
        if (ckey == "expression") expression = ScalarText(e);
      });
    });
    if (!expression || expression->empty()) throw DecodeError("no cel.expression");
    if (expression->size() > kSelectorBound.max) {
      throw DecodeError("cel.expression longer than " + Count(kSelectorBound.max) + " bytes",
                        kSelectorBound.reason);
    }
    out.push_back(std::move(*expression));
  });
  return out;
}

// A field of an `exactly` request or a firstAvailable alternative into `r`.
void RequestField(std::string_view key, value x, DraDeviceRequest& r) {
  if (key == "deviceClassName") {
    r.device_class = ScalarText(x);
  } else if (key == "selectors") {
    r.selectors = Selectors(x);
  } else if (key == "allocationMode") {
    std::string_view mode = ScalarText(x);
    if (mode != "" && mode != "ExactCount" && mode != "All") {
      throw DecodeError("unknown mode \"" + QuoteForMessage(mode, 64) + "\"");
    }
    r.all = mode == "All";
  } else if (key == "count") {
    r.count = Within(Integer(x), 1, kMaxDraCount, 1);
  } else if (key == "adminAccess") {
    r.admin_access = Boolean(x);
  }
}

DraDeviceRequest Request(value v) {
  DraDeviceRequest r;
  bool exactly = false;
  ForFields(v, [&](std::string_view key, value x) {
    if (key == "name") {
      r.name = ScalarText(x);
    } else if (key == "exactly" && !IsNull(x)) {
      exactly = true;
      ForFields(x, [&](std::string_view ekey, value e) { RequestField(ekey, e, r); });
    } else if (key == "firstAvailable") {
      ForEach(x, kRequestsBound, [&](value s) {
        DraDeviceRequest& sub = r.first_available.emplace_back();
        ForFields(s, [&](std::string_view skey, value e) {
          if (skey == "name") sub.name = ScalarText(e);
          RequestField(skey, e, sub);
        });
      });
    }
  });
  if (exactly == !r.first_available.empty()) {
    throw DecodeError(exactly ? "both exactly and firstAvailable"
                              : "neither exactly nor firstAvailable");
  }
  return r;
}

std::vector<std::string> Strings(value v) {
  std::vector<std::string> out;
  ForEach(v, kListBound, [&](value s) { out.emplace_back(ScalarText(s)); });
  return out;
}

void ClaimSpec(value v, DraClaim& claim) {
  ForFields(v, [&](std::string_view key, value devices) {
    if (key != "devices") return;
    ForFields(devices, [&](std::string_view dkey, value x) {
      if (dkey == "requests") {
        ForEach(x, kRequestsBound, [&](value r) { claim.requests.push_back(Request(r)); });
      } else if (dkey == "constraints") {
        ForEach(x, kListBound, [&](value c) {
          DraConstraint& constraint = claim.constraints.emplace_back();
          ForFields(c, [&](std::string_view ckey, value e) {
            if (ckey == "requests") constraint.requests = Strings(e);
            if (ckey == "matchAttribute") constraint.match_attribute = ScalarText(e);
          });
        });
      }
    });
  });
}

DraAllocatedDevice Result(value v) {
  DraAllocatedDevice out;
  ForFields(v, [&](std::string_view key, value x) {
    if (key == "request") out.request = ScalarText(x);
    if (key == "driver") out.driver = ScalarText(x);
    if (key == "pool") out.pool = ScalarText(x);
    if (key == "device") out.device = ScalarText(x);
    if (key == "adminAccess") out.admin_access = Boolean(x);
  });
  return out;
}

void ClaimStatus(value v, DraClaim& claim) {
  ForFields(v, [&](std::string_view key, value x) {
    if (key == "allocation" && !IsNull(x)) {
      claim.allocated = true;
      ForFields(x, [&](std::string_view akey, value devices) {
        if (akey != "devices") return;
        ForFields(devices, [&](std::string_view dkey, value results) {
          if (dkey != "results") return;
          ForEach(results, kListBound, [&](value r) { claim.results.push_back(Result(r)); });
        });
      });
    } else if (key == "reservedFor") {
      ForEach(x, kListBound, [&](value r) {
        std::string uid;
        ForFields(r, [&](std::string_view rkey, value u) {
          if (rkey == "uid") uid = ScalarText(u);
        });
        claim.reserved_for.push_back(std::move(uid));
      });
    }
  });
}

// What the DRA objects keep of their metadata (a slice and a class are cluster-scoped: no
// namespace).
struct ObjectMeta {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// Reads the metadata of the object `o` into `meta`, and runs `spec(value)` and `status(value)` on
// its spec and status.
template <class Spec, class Status>
void Sections(object o, ObjectMeta& meta, Spec&& spec, Status&& status) {
  for (field f : o) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      WithContext("metadata", [&] {
        ForFields(f.value(), [&](std::string_view field_key, value x) {
          if (field_key == "namespace") meta.namespace_name = ScalarText(x);
          if (field_key == "name") meta.name = ScalarText(x);
          if (field_key == "uid") meta.uid = ScalarText(x);
        });
      });
    } else if (key == "spec") {
      WithContext("spec", [&] { spec(f.value()); });
    } else if (key == "status") {
      WithContext("status", [&] { status(f.value()); });
    }
  }
}

// The same, for an object whose status gpusched does not read.
template <class Spec>
void Sections(object o, ObjectMeta& meta, Spec&& spec) {
  Sections(o, meta, spec, [](value) {});
}

}  // namespace
}  // namespace dra_decode

DraSlice DecodeDraSlice(simdjson::ondemand::object o) {
  using namespace dra_decode;  // NOLINT(google-build-using-namespace): this file's helpers
  DraSlice slice;
  ObjectMeta meta;
  Sections(o, meta, [&](value spec) { SliceSpec(spec, slice); });
  slice.name = std::move(meta.name);
  // On-Demand reads forward only: the driver may come after the devices.
  if (!slice.devices.empty() && slice.driver.empty()) throw DecodeError("spec: driver: missing");
  for (size_t i = 0; i < slice.devices.size(); ++i) {
    std::string where = "spec: devices: [" + std::to_string(i) + "]: ";
    Qualify(slice.devices[i].attributes, slice.driver, where + "attributes");
    Qualify(slice.devices[i].capacity, slice.driver, where + "capacity");
  }
  return slice;
}

DraClaim DecodeDraClaim(simdjson::ondemand::object o) {
  using namespace dra_decode;  // NOLINT(google-build-using-namespace)
  DraClaim claim;
  ObjectMeta meta;
  Sections(
      o, meta, [&](value spec) { ClaimSpec(spec, claim); },
      [&](value status) { ClaimStatus(status, claim); });
  claim.namespace_name = std::move(meta.namespace_name);
  claim.name = std::move(meta.name);
  claim.uid = std::move(meta.uid);
  return claim;
}

DraDeviceClass DecodeDraDeviceClass(simdjson::ondemand::object o) {
  using namespace dra_decode;  // NOLINT(google-build-using-namespace)
  DraDeviceClass device_class;
  ObjectMeta meta;
  Sections(o, meta, [&](value spec) {
    ForFields(spec, [&](std::string_view key, value x) {
      if (key == "selectors") device_class.selectors = Selectors(x);
      if (key == "extendedResourceName") device_class.extended_resource_name = ScalarText(x);
    });
  });
  device_class.name = std::move(meta.name);
  return device_class;
}

}  // namespace gpusched
