// Text that people write into annotations, policy files and flags: surrounding space trimmed,
// comma-separated lists, and case-insensitive globs over names (GPU products); and the plain-text
// tables the commands print. Pure functions.
#pragma once

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

// `s` padded with spaces on the right to `width` bytes (unchanged when longer).
std::string PadRight(std::string s, size_t width);
// `rows` (the first is the header) as lines of left-aligned columns, each as wide as its widest
// cell plus two spaces, trailing spaces dropped; every line ends in '\n'.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace gpusched
