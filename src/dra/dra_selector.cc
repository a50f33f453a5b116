// The evaluation of a DRA device selector against one device, and the selector's front door;
// its parser is dra_selector_parser.cc, the tree both share dra_selector_tree.h.
#include "gpusched/dra/dra_selector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "dra_selector_tree.h"
#include "gpusched/util/quantity.h"

namespace gpusched {
namespace dra_cel {
namespace {

// ---- Values

// A semantic version: major.minor.patch and an optional pre-release; build metadata dropped.
struct Semver {
  uint64_t part[3] = {0, 0, 0};
  std::string_view pre;
};

std::optional<Semver> ParseSemver(std::string_view t) {
  t = t.substr(0, t.find('+'));
  Semver v;
  if (size_t dash = t.find('-'); dash != std::string_view::npos) {
    v.pre = t.substr(dash + 1);
    t = t.substr(0, dash);
    for (size_t start = 0; start <= v.pre.size();) {
      size_t end = std::min(v.pre.find('.', start), v.pre.size());
      std::string_view id = v.pre.substr(start, end - start);
      auto valid = [](char c) { return c == '-' || (c != '_' && IsIdentChar(c)); };
      if (id.empty() || !std::all_of(id.begin(), id.end(), valid)) return std::nullopt;
      start = end + 1;
    }
  }
  for (uint64_t& part : v.part) {
    size_t end = &part == &v.part[2] ? t.size() : t.find('.');
    if (end == std::string_view::npos || !IsNumeric(t.substr(0, end)) ||
        std::from_chars(t.data(), t.data() + end, part).ec != std::errc()) {
      return std::nullopt;
    }
    t.remove_prefix(std::min(end + 1, t.size()));
  }
  return v;
}

template <class T>
int Sign(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}

int CompareSemver(const Semver& a, const Semver& b) {
  for (int i = 0; i < 3; ++i) {
    if (int c = Sign(a.part[i], b.part[i])) return c;
  }
  // A pre-release sorts before its release; its identifiers compare one by one, numeric ones as
  // numbers and before alphanumeric ones; a prefix sorts first.
  if (a.pre.empty() || b.pre.empty()) return Sign(a.pre.empty(), b.pre.empty());
  std::string_view x = a.pre, y = b.pre;
  while (!x.empty() && !y.empty()) {
    std::string_view ix = x.substr(0, x.find('.')), iy = y.substr(0, y.find('.'));
    x.remove_prefix(std::min(ix.size() + 1, x.size()));
    y.remove_prefix(std::min(iy.size() + 1, y.size()));
    bool nx = IsNumeric(ix), ny = IsNumeric(iy);
    int c = nx && ny   ? Sign(std::pair(ix.size(), ix), std::pair(iy.size(), iy))
            : nx != ny ? (nx ? -1 : 1)
                       : Sign(ix, iy);
    if (c != 0) return c;
  }
  return Sign(!x.empty(), !y.empty());
}

struct Value {
  enum class Kind : uint8_t { kError, kBool, kInt, kString, kVersion, kQuantity };
  Kind kind = Kind::kError;
  int64_t number = 0;     // kBool, kInt, kQuantity (milli-units)
  std::string_view text;  // kString: into the tree, the device or the driver
  Semver version;
};
using K = Value::Kind;

Value Of(K kind, int64_t number, std::string_view text = {}) {
  return Value{kind, number, text, {}};
}
Value Bool(bool b) { return Of(K::kBool, b); }
Value VersionOf(std::string_view text) {
  std::optional<Semver> v = ParseSemver(text);
  return v ? Value{K::kVersion, 0, {}, *v} : Value{};
}

// -1, 0 or 1 for two values of the same kind.
int Compare(const Value& a, const Value& b) {
  if (a.kind == K::kString) return Sign(a.text, b.text);
  if (a.kind == K::kVersion) return CompareSemver(a.version, b.version);
  return Sign(a.number, b.number);
}

Value Method(std::string_view name, const Value& target, const Value& arg) {
  if (target.kind != arg.kind) return {};
  if (target.kind == K::kString) {
    if (name == "startsWith") return Bool(target.text.starts_with(arg.text));
    if (name == "endsWith") return Bool(target.text.ends_with(arg.text));
    if (name == "contains") return Bool(target.text.find(arg.text) != std::string_view::npos);
    return {};
  }
  if (target.kind != K::kVersion && target.kind != K::kQuantity) return {};
  int c = Compare(target, arg);
  if (name == "compareTo") return Of(K::kInt, c);
  if (name == "isGreaterThan") return Bool(c > 0);
  if (name == "isLessThan") return Bool(c < 0);
  return {};
}

Value Comparison(std::string_view op, const Value& a, const Value& b) {
  if (a.kind == K::kError || a.kind != b.kind) return {};
  int c = Compare(a, b);
  if (op == "==" || op == "!=") return Bool((c == 0) == (op == "=="));
  if (a.kind != K::kInt && a.kind != K::kString) return {};
  return Bool(op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0);
}

Value AttributeValue(const DraValue& v) {
  if (v.kind == DraValue::Kind::kVersion) return VersionOf(v.text);
  if (v.kind == DraValue::Kind::kString) return Of(K::kString, 0, v.text);
  return v.kind == DraValue::Kind::kInt ? Of(K::kInt, v.int_value) : Bool(v.bool_value);
}

struct Evaluator {
  std::string_view driver;
  const DraDevice& device;

  Value Eval(const Node& n) const {
    if (n.op == Op::kAnd || n.op == Op::kOr) {
      // CEL's commutative && and ||: an operand that decides wins over an error in another.
      const bool decides = n.op == Op::kOr;
      bool error = false;
      for (const Node& kid : n.kids) {
        Value v = Eval(kid);
        if (v.kind == K::kBool && (v.number != 0) == decides) return Bool(decides);
        error = error || v.kind != K::kBool;
      }
      return error ? Value{} : Bool(!decides);
    }
    const Value a = n.kids.empty() ? Value{} : Eval(n.kids[0]);
    const Value b = n.kids.size() < 2 ? Value{} : Eval(n.kids[1]);
    switch (n.op) {
      case Op::kBool:
        return Bool(n.number != 0);
      case Op::kInt:
        return Of(K::kInt, n.number);
      case Op::kString:
        return Of(K::kString, 0, n.text);
      case Op::kDriver:
        return Of(K::kString, 0, driver);
      case Op::kAttribute: {
        auto it = device.attributes.find(n.text);
        return it == device.attributes.end() ? Value{} : AttributeValue(it->second);
      }
      case Op::kCapacity: {
        auto it = device.capacity.find(n.text);
        return it == device.capacity.end() ? Value{} : Of(K::kQuantity, it->second);
      }
      case Op::kIn: {
        if (a.kind != K::kString) return {};
        std::string key = n.kids[1].text + "/" + std::string(a.text);
        return Bool(n.kids[1].capacity ? device.capacity.contains(key)
                                       : device.attributes.contains(key));
      }
      case Op::kCall: {
        if (a.kind != K::kString) return {};
        if (n.text == "semver") return VersionOf(a.text);
        std::optional<int64_t> milli = ParseQuantityMilli(a.text);
        return milli ? Of(K::kQuantity, *milli) : Value{};
      }
      case Op::kMethod:
        return Method(n.text, a, b);
      case Op::kNot:
        return a.kind == K::kBool ? Bool(a.number == 0) : Value{};
      case Op::kNegate:
        return a.kind == K::kInt && a.number != std::numeric_limits<int64_t>::min()
                   ? Of(K::kInt, -a.number)
                   : Value{};
      case Op::kCompare:
        return Comparison(n.text, a, b);
      default:
        return {};  // kDomain: only read by kIn
    }
  }
};

size_t CountNodes(const Node& n) {
  size_t count = 1;
  for (const Node& kid : n.kids) count += CountNodes(kid);
  return count;
}

}  // namespace
}  // namespace dra_cel

DraSelector DraSelector::Compile(std::string_view expression) {
  DraSelector selector;
  if (expression.size() > kMaxDraSelectorBytes) {
    selector.reason_ = "longer than " + std::to_string(kMaxDraSelectorBytes) + " bytes";
    return selector;
  }
  try {
    selector.root_ = std::make_shared<const Node>(dra_cel::ParseSelector(expression));
    selector.cost_ = dra_cel::CountNodes(*selector.root_);
  } catch (const dra_cel::Unsupported& e) {
    selector.reason_ = e.what();
  }
  return selector;
}

std::optional<bool> DraSelector::Matches(std::string_view driver, const DraDevice& device) const {
  if (!root_) return std::nullopt;
  dra_cel::Value v = dra_cel::Evaluator{driver, device}.Eval(*root_);
  if (v.kind != dra_cel::K::kBool) return std::nullopt;
  return v.number != 0;
}

}  // namespace gpusched
