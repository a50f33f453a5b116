#include "fuzz/quantity_oracle.h"

#include <limits>
#include <string>
#include <vector>

namespace gpusched::fuzz {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Suffix {
  int binary_power = 0;   // times 1024^binary_power
  int decimal_power = 0;  // times 10^decimal_power
};

std::optional<Suffix> ReadSuffix(std::string_view s) {
  static constexpr std::string_view kDecimal[] = {"m", "", "k", "M", "G", "T", "P", "E"};
  static constexpr std::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (int i = 0; i < 8; ++i)
    if (s == kDecimal[i]) return Suffix{0, 3 * (i - 1)};
  for (int i = 0; i < 6; ++i)
    if (s == kBinary[i]) return Suffix{i + 1, 0};
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return std::nullopt;
  bool negative = s[1] == '-';
  std::string_view digits = s.substr(s[1] == '+' || s[1] == '-' ? 2 : 1);
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  int exponent = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return std::nullopt;
    exponent = exponent * 10 + (c - '0');
  }
  return Suffix{0, negative ? -exponent : exponent};
}

// A non-negative integer as decimal digits, most significant first, no leading zeros.
using Decimal = std::vector<int>;

void MultiplyBy(Decimal& n, int factor) {
  int carry = 0;
  for (auto it = n.rbegin(); it != n.rend(); ++it) {
    int product = *it * factor + carry;
    *it = product % 10;
    carry = product / 10;
  }
  for (; carry > 0; carry /= 10) n.insert(n.begin(), carry % 10);
}

void Increment(Decimal& n) {
  for (auto it = n.rbegin(); it != n.rend(); ++it) {
    if (*it < 9) {
      ++*it;
      return;
    }
    *it = 0;
  }
  n.insert(n.begin(), 1);
}

}  // namespace

std::optional<int64_t> ReferenceQuantityMilli(std::string_view text) {
  size_t i = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  bool negative = i == 1 && text[0] == '-';
  Decimal digits;
  int fraction_digits = 0;
  bool point = false, any_digit = false;
  for (; i < text.size() && (IsDigit(text[i]) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (point) return std::nullopt;
      point = true;
      continue;
    }
    any_digit = true;
    if (point) ++fraction_digits;
    if (!digits.empty() || text[i] != '0') digits.push_back(text[i] - '0');
  }
  std::optional<Suffix> suffix = ReadSuffix(text.substr(i));
  if (!any_digit || !suffix) return std::nullopt;

  // milli-units = digits * 1024^b * 10^(3 + decimal_power - fraction_digits)
  for (int b = 0; b < suffix->binary_power && !digits.empty(); ++b) MultiplyBy(digits, 1024);
  int exponent = 3 + suffix->decimal_power - fraction_digits;
  if (exponent >= 0) {
    // Past 20 digits the value saturates whatever the exponent: no need to write them all.
    if (!digits.empty()) digits.resize(digits.size() + std::min(exponent, 21), 0);
  } else {
    size_t keep = digits.size() > size_t(-exponent) ? digits.size() - size_t(-exponent) : 0;
    bool remainder = false;
    for (size_t d = keep; d < digits.size(); ++d) remainder = remainder || digits[d] != 0;
    digits.resize(keep);
    if (remainder) Increment(digits);
  }

  const std::string max = std::to_string(std::numeric_limits<int64_t>::max());
  std::string magnitude;
  for (int d : digits) magnitude += char('0' + d);
  if (magnitude.size() > max.size() || (magnitude.size() == max.size() && magnitude > max)) {
    return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  int64_t value = magnitude.empty() ? 0 : std::stoll(magnitude);
  return negative ? -value : value;
}

}  // namespace gpusched::fuzz
