#include "gpusched/cli/flag_values.h"

#include <charconv>
#include <cmath>

namespace gpusched {
namespace {

// The comma-separated items of `text`, empty ones included.
std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    items.push_back(
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

}  // namespace

std::optional<int64_t> ParseWholeNumber(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < min || v > max) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> ParseDecimal(std::string_view text, double min, double max) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v) ||
      v < min || v > max) {
    return std::nullopt;
  }
  return v;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

std::optional<HostPort> ParseHostPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  auto port = ParseWholeNumber(text.substr(colon + 1), 0, 65535);
  if (!port) return std::nullopt;
  return HostPort{std::string(text.substr(0, colon)), static_cast<int>(*port)};
}

std::optional<std::vector<uint64_t>> ParseSeedList(std::string_view text) {
  std::vector<uint64_t> seeds;
  for (std::string_view item : SplitCommas(text)) {
    size_t dash = item.find('-');
    auto first = ParseWholeNumber(item.substr(0, dash), 0, INT64_MAX);
    auto last = dash == std::string_view::npos
                    ? first
                    : ParseWholeNumber(item.substr(dash + 1), 0, INT64_MAX);
    if (!first || !last || *last < *first ||
        *last - *first >= kMaxSeeds - static_cast<int64_t>(seeds.size())) {
      return std::nullopt;
    }
    for (int64_t v = *first; v <= *last; ++v) seeds.push_back(static_cast<uint64_t>(v));
  }
  return seeds;
}

std::optional<std::vector<std::string>> ParseNameList(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view item : SplitCommas(text)) {
    if (item.empty()) return std::nullopt;
    names.emplace_back(item);
  }
  return names;
}

}  // namespace gpusched
