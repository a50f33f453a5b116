// ReferenceQuantityMilli: what ParseQuantityMilli must return, computed the slow, obvious way, so
// the quantity fuzz check can compare the two on any input.
//
// The grammar is Kubernetes': <sign>? <number> <suffix>?, <number> being decimal digits with at
// most one '.' and at least one digit, <suffix> a binary SI suffix (Ki..Ei), a decimal one (m, k,
// M, G, T, P, E) or an exponent of at most three digits (e3, E-2). The value is exact: every digit
// is kept in a decimal big number, multiplied out, and the milli-units rounded away from zero
// (Kubernetes' MilliValue rounds up), then saturated at the int64 range. nullopt when the text is
// not a quantity. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpusched::fuzz {

std::optional<int64_t> ReferenceQuantityMilli(std::string_view text);

}  // namespace gpusched::fuzz
