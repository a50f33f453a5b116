// Kubernetes resource quantities ("2", "500m", "16Gi", "1e3", "2113442296Ki").
//
// Quantities are parsed exactly (no floating point) into milli-units, rounding up as
// Kubernetes' MilliValue() does, and saturating at the int64 range. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpusched {

// Returns the quantity in thousandths of its unit, or nullopt when `text` is not a quantity.
std::optional<int64_t> ParseQuantityMilli(std::string_view text);

// a + b, saturating at the int64 range as quantities do.
int64_t SaturatingAdd(int64_t a, int64_t b);

// Whole units from milli-units, rounded up as Kubernetes' Value() does.
int64_t MilliToUnitsCeil(int64_t milli);

}  // namespace gpusched
