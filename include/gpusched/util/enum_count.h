// EnumCount: how many values an enum has whose enumerators run from 0 without gaps, counted from
// its last one, so that an array indexed by the enum is sized by the enum itself and a count typed
// by hand cannot fall behind it. Pure.
#pragma once

#include <cstddef>
#include <type_traits>

namespace gpusched {

template <class Enum>
requires std::is_enum_v<Enum>
constexpr size_t EnumCount(Enum last) { return static_cast<size_t>(last) + 1; }

}  // namespace gpusched
