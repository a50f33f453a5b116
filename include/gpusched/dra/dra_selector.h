// The part of CEL (Common Expression Language) that DRA device selectors are written in, enough
// for NVIDIA's DeviceClasses and its documented examples, evaluated against one device.
//
// Supported: string literals in single or double quotes (escapes \\ \' \" \n \t \r), decimal
// integers, true and false; device.driver; device.attributes["domain"].name and
// device.attributes["domain"]["name"] (the attribute "domain/name", see DraAttributes);
// device.capacity["domain"].name (a quantity); "name" in device.attributes["domain"] (and
// device.capacity[...]) for presence; quantity("80Gi") and semver("1.2.3"); the methods
// compareTo (quantities, semvers: -1, 0 or 1), isGreaterThan and isLessThan (semvers,
// quantities), startsWith, endsWith and contains (strings); the operators ==, != (any two values
// of the same kind), <, <=, >, >= (integers, strings), &&, ||, !, unary minus on integers, and
// parentheses, with CEL's precedence; // comments. Versions compare as semantic versions (major,
// minor and patch numerically, then the pre-release; build metadata ignored). && and || absorb
// errors as CEL's do (false && error is false, true || error is true).
//
// Anything else (other functions and macros such as matches, size, exists or has, lists, maps,
// arithmetic, the ternary operator, chained comparisons, doubles, indexes that are no string
// literal) makes the selector unsupported, as does an expression longer than kMaxDraSelectorBytes
// or nested deeper than kMaxDraSelectorDepth. Evaluation errors (an attribute the device lacks,
// values of kinds an operator does not take, a version or quantity that does not parse, a result
// that is no boolean) make Matches nullopt, as CEL's runtime errors (what that means for a claim:
// dra/dra_claims.h). == and != on values of two kinds are such an error too, where CEL would
// answer false. Value type, cheap to copy (copies share the compiled tree); const methods are
// thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpusched/dra/dra.h"

namespace gpusched {

// Parentheses, arguments, unary operators and method calls one inside another.
inline constexpr size_t kMaxDraSelectorDepth = 32;

class DraSelector {
 public:
  static DraSelector Compile(std::string_view expression);

  bool supported() const { return root_ != nullptr; }
  // Why the expression is not supported ("function 'matches' is not supported"); "" when it is.
  std::string unsupported_reason() const { return reason_; }
  // Whether `device` of `driver` matches; nullopt when unsupported or when evaluation fails.
  std::optional<bool> Matches(std::string_view driver, const DraDevice& device) const;
  // What one Matches costs at most: the nodes of the syntax tree (0 when unsupported). Callers
  // bound their work by it (dra/dra_claims.h).
  size_t cost() const { return cost_; }

  struct Node;  // the expression's syntax tree (src/dra/dra_selector_tree.h)

 private:
  std::shared_ptr<const Node> root_;
  std::string reason_;
  size_t cost_ = 0;
};

}  // namespace gpusched
