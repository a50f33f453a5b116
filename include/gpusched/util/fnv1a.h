// FNV-1a (64 bit): a hash that is the same across runs, builds and platforms, unlike std::hash,
// for values that are kept, compared between processes or shown: node content classes,
// consolidate's node order, policy digests. Not for anything an attacker must not collide.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpusched {

class Fnv1a {
 public:
  Fnv1a& Byte(unsigned char c) {
    value_ ^= c;
    value_ *= 1099511628211ull;
    return *this;
  }
  Fnv1a& Bytes(std::string_view bytes) {
    for (unsigned char c : bytes) Byte(c);
    return *this;
  }
  uint64_t value() const { return value_; }

  static uint64_t Of(std::string_view bytes) { return Fnv1a().Bytes(bytes).value(); }

 private:
  uint64_t value_ = 14695981039346656037ull;
};

}  // namespace gpusched
