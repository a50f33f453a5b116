#include "gpusched/util/quote.h"

namespace gpusched {

std::string QuoteForMessage(std::string_view bytes, size_t max_len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::string_view kept = bytes.substr(0, max_len);
  out.reserve(kept.size() + 3);
  for (char c : kept) {
    auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    }
  }
  if (bytes.size() > max_len) out += "...";
  return out;
}

}  // namespace gpusched
