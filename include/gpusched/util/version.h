// Dotted numeric versions ("535.104.05", "12.2", "8.0") compared component by component as
// numbers, so 535.104.05 > 535.54 and 12.10 > 12.2. Missing trailing components count as 0.
// Value type; thread-safe.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

class Version {
 public:
  // Accepts one to four dot-separated decimal components; nullopt otherwise.
  static std::optional<Version> Parse(std::string_view text);

  std::string ToString() const;
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::vector<uint32_t> parts_;
};

}  // namespace gpusched
