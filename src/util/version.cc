#include "gpusched/util/version.h"

#include <algorithm>

namespace gpusched {

std::optional<Version> Version::Parse(std::string_view text) {
  Version v;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    std::string_view part = text.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 9) return std::nullopt;
    uint32_t n = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<uint32_t>(c - '0');
    }
    v.parts_.push_back(n);
    if (v.parts_.size() > 4) return std::nullopt;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return v;
}

std::string Version::ToString() const {
  std::string out;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(parts_[i]);
  }
  return out;
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  size_t n = std::max(parts_.size(), other.parts_.size());
  for (size_t i = 0; i < n; ++i) {
    uint32_t a = i < parts_.size() ? parts_[i] : 0;
    uint32_t b = i < other.parts_.size() ? other.parts_[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

}  // namespace gpusched
