#include "gpusched/kube/api_query.h"

#include <cctype>

namespace gpusched {

std::string ApiQuery(std::string_view path, std::initializer_list<std::string> params) {
  std::string q(path);
  char sep = '?';
  for (const auto& p : params) {
    if (p.empty()) continue;
    q += sep + p;
    sep = '&';
  }
  return q;
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace gpusched
