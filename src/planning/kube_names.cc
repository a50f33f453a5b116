#include "gpusched/planning/kube_names.h"

#include <algorithm>

#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = std::min(s.find('.', start), s.size());
    std::string_view part = s.substr(start, dot - start);
    if (part.empty() || !IsLowerAlnum(part.front()) || !IsLowerAlnum(part.back())) return false;
    if (!std::all_of(part.begin(), part.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; }))
      return false;
    start = dot + 1;
  }
  return true;
}

bool IsLabelValue(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

KubectlLine LabelNodeCommand(std::string_view node, std::string_view key, std::string_view value) {
  if (!IsDnsSubdomain(node)) {
    return {"", "node name " + QuoteForMessage(node, 96) + " is not a DNS subdomain"};
  }
  if (!IsLabelValue(value)) {
    return {"", "label value " + QuoteForMessage(value, 96) + " is not a valid label value"};
  }
  return {"kubectl label node " + std::string(node) + " " + std::string(key) + "=" +
              std::string(value) + " --overwrite",
          ""};
}

}  // namespace gpusched
