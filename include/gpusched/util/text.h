// Text that people write into annotations, policy files and flags: surrounding space trimmed,
// comma-separated lists, and case-insensitive globs over names (GPU products). Pure functions.
#ifndef GPUSCHED_UTIL_TEXT_H_
#define GPUSCHED_UTIL_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// `s` without leading and trailing whitespace.
std::string Trimmed(std::string_view s);
// The items of "a, b,,c": trimmed, empty ones dropped.
std::vector<std::string> SplitList(std::string_view comma_separated);
// Case-insensitive glob with * (any run) and ? (any one character).
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_UTIL_TEXT_H_
