#include "gpusched/util/quantity.h"

#include <limits>

namespace gpusched {
namespace {

using Wide = __int128;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// Past this magnitude every result saturates, so larger intermediates need not be exact.
constexpr Wide kCap = Wide(1) << 100;

struct Suffix {
  int binary_power = 0;   // multiply by 2^(10*binary_power)
  int decimal_power = 0;  // multiply by 10^decimal_power
};

std::optional<Suffix> ParseSuffix(std::string_view s) {
  if (s.empty()) return Suffix{};
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    auto pos = kBinary.find(s[0]);
    if (pos == std::string_view::npos) return std::nullopt;
    return Suffix{static_cast<int>(pos) + 1, 0};
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'm':
        return Suffix{0, -3};
      case 'k':
        return Suffix{0, 3};
      case 'M':
        return Suffix{0, 6};
      case 'G':
        return Suffix{0, 9};
      case 'T':
        return Suffix{0, 12};
      case 'P':
        return Suffix{0, 15};
      case 'E':
        return Suffix{0, 18};
      default:
        return std::nullopt;
    }
  }
  if (s[0] == 'e' || s[0] == 'E') {
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 3) return std::nullopt;
    int exponent = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      exponent = exponent * 10 + (c - '0');
    }
    return Suffix{0, negative ? -exponent : exponent};
  }
  return std::nullopt;
}

Wide Clamp(Wide v) { return v > kCap ? kCap : (v < -kCap ? -kCap : v); }

// A non-negative integer below 2^192, least significant limb first: wide enough for a mantissa
// (below 2^104) times a binary suffix (up to 2^60), so that dividing the product down by powers of
// ten is exact. Clamping it at kCap before dividing would not be: 1.0000000000000000000000Gi is
// 2^100 after the suffix, and 2^100 / 10^19 is far below the true 1073741824000.
class Wide192 {
 public:
  explicit Wide192(Wide v) : limb_{static_cast<uint64_t>(v), static_cast<uint64_t>(v >> 64), 0} {}
  void ShiftLeft10() {
    limb_[2] = (limb_[2] << 10) | (limb_[1] >> 54);
    limb_[1] = (limb_[1] << 10) | (limb_[0] >> 54);
    limb_[0] <<= 10;
  }
  // Divides by ten; returns the remainder.
  unsigned DivideBy10() {
    unsigned __int128 remainder = 0;
    for (int i = 2; i >= 0; --i) {
      unsigned __int128 current = (remainder << 64) | limb_[i];
      limb_[i] = static_cast<uint64_t>(current / 10);
      remainder = current % 10;
    }
    return static_cast<unsigned>(remainder);
  }
  bool IsZero() const { return (limb_[0] | limb_[1] | limb_[2]) == 0; }
  // The value, or kCap when it is larger (every result past kCap saturates).
  Wide Capped() const {
    if (limb_[2] != 0 || limb_[1] >= (uint64_t{1} << 36)) return kCap;
    return (Wide(limb_[1]) << 64) | limb_[0];
  }

 private:
  uint64_t limb_[3];
};

}  // namespace

std::optional<int64_t> ParseQuantityMilli(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    i = 1;
  }
  Wide mantissa = 0;
  int fraction_digits = 0;
  int dropped_digits = 0;  // integer digits beyond what Wide can hold scale the value instead
  bool seen_digit = false;
  bool seen_point = false;
  bool truncated_nonzero = false;  // a digit not taken into the mantissa was not 0: round up
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (seen_point) return std::nullopt;
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    seen_digit = true;
    if (mantissa < kCap) {
      mantissa = mantissa * 10 + (c - '0');
      if (seen_point) ++fraction_digits;
    } else {
      if (!seen_point) ++dropped_digits;
      if (c != '0') truncated_nonzero = true;
    }
  }
  if (!seen_digit) return std::nullopt;
  auto suffix = ParseSuffix(text.substr(i));
  if (!suffix) return std::nullopt;

  Wide value;
  int power = 3 + suffix->decimal_power - fraction_digits + dropped_digits;
  if (power >= 0) {
    // Only multiplications: clamping along the way cannot bring a saturated value back in range.
    value = mantissa;
    for (int b = 0; b < suffix->binary_power; ++b) value = Clamp(value * 1024);
    for (; power > 0; --power) value = Clamp(value * 10);
    if (truncated_nonzero) ++value;
  } else {
    Wide192 exact(mantissa);
    for (int b = 0; b < suffix->binary_power; ++b) exact.ShiftLeft10();
    bool remainder = truncated_nonzero;
    for (; power < 0 && !exact.IsZero(); ++power) remainder |= exact.DivideBy10() != 0;
    value = exact.Capped();
    if (remainder) ++value;  // round up, like Kubernetes
  }
  if (negative) value = -value;
  if (value > kMax) return kMax;
  if (value < kMin) return kMin;
  return static_cast<int64_t>(value);
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? kMax : kMin;
}

int64_t MilliToUnitsCeil(int64_t milli) {
  if (milli <= 0) return milli / 1000;
  return milli / 1000 + (milli % 1000 != 0 ? 1 : 0);
}

}  // namespace gpusched
