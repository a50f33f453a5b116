// Strict readers of command-line flag values. The whole text must be the value, or it is refused:
// "1.3abc" is not 1.3, "8080x" is not a port, "42-51," is not a seed range. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// A decimal whole number in [min, max], no sign other than a leading '-', no spaces.
std::optional<int64_t> ParseWholeNumber(std::string_view text, int64_t min, int64_t max);

// A finite decimal number in [min, max] ("1.3", "5", "2e-1").
std::optional<double> ParseDecimal(std::string_view text, double min, double max);

// "true" or "false".
std::optional<bool> ParseBool(std::string_view text);

struct HostPort {
  std::string host;
  int port = 0;
};
// HOST:PORT with a non-empty host and a port in 0..65535; the last ':' separates them, so an
// IPv6 host may be written [::1]:8888.
std::optional<HostPort> ParseHostPort(std::string_view text);

// Seeds written as ranges and single values joined by commas: "42-51", "1,5,7-9". The list may
// hold at most kMaxSeeds seeds, however its ranges add up, so a typo cannot ask for billions of
// runs.
inline constexpr int64_t kMaxSeeds = 10001;
std::optional<std::vector<uint64_t>> ParseSeedList(std::string_view text);

// Non-empty names joined by commas: "fgd,gpusched,my.yaml"; an empty name is refused.
std::optional<std::vector<std::string>> ParseNameList(std::string_view text);

}  // namespace gpusched
