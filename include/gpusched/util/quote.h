// Quoting untrusted bytes (file contents, keys, values) into error messages, so every message
// stays one printable line whatever the input holds: a binary file's bytes, a newline in a key,
// a 50,000-character scalar.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpusched {

// `bytes` with printable ASCII kept and every other byte written as \xNN; past `max_len` input
// bytes the rest is dropped and "..." appended. Printable ASCII in, same text out, so quoting a
// quoted message again changes nothing.
std::string QuoteForMessage(std::string_view bytes, size_t max_len = 256);

}  // namespace gpusched
