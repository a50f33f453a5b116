// The syntax tree of a compiled DRA device selector (dra/dra_selector.h), shared by its parser
// (dra_selector_parser.cc: text to tree, or Unsupported naming what is not supported) and its
// evaluator (dra_selector.cc: a tree against one device). Private to the model layer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/dra_selector.h"
#include "gpusched/util/input_error.h"

namespace gpusched {

// One node of a compiled selector. Literals (kBool and kInt in `number`, kString in `text`);
// device.driver; kAttribute and kCapacity, `text` the qualified name; kDomain, the map
// device.attributes["d"] (or device.capacity["d"] with `capacity`), `text` the domain, which stands
// only on the right of kIn (kids: the name, the kDomain); kCall (`text` quantity or semver, one
// kid) and kMethod (`text` the method, kids the target and the argument); kNot and kNegate (one
// kid); kAnd and kOr (any number of kids); kCompare (`text` the operator, two kids).
struct DraSelector::Node {
  enum class Op : uint8_t {
    kBool,
    kInt,
    kString,
    kDriver,
    kAttribute,
    kCapacity,
    kDomain,
    kIn,
    kCall,
    kMethod,
    kNot,
    kNegate,
    kAnd,
    kOr,
    kCompare
  };
  Op op = Op::kBool;
  int64_t number = 0;
  bool capacity = false;
  std::string text;
  std::vector<Node> kids;
};

// A namespace of its own: the model layer may be compiled as one unit (GPUSCHED_UNITY_BUILD).
namespace dra_cel {

using Node = DraSelector::Node;
using Op = Node::Op;

// What makes a selector unsupported; its message says what. An InputError like every reader's
// (gpusched/util/input_error.h); DraSelector::Compile keeps it as the selector's reason.
class Unsupported : public InputError {
 public:
  using InputError::InputError;
};

// The tree of `expression`; throws Unsupported. The caller checks the expression's length.
Node ParseSelector(std::string_view expression);

// CEL's character classes, for the tokens and for semantic versions.
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdentChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsNumeric(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

}  // namespace dra_cel
}  // namespace gpusched
