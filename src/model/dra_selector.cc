#include "gpusched/model/dra_selector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

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
namespace {

using Node = DraSelector::Node;
using Op = Node::Op;

class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsNumeric(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}
bool IsOneOf(std::string_view word, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}
std::string Quoted(std::string_view text) { return "'" + QuoteForMessage(text, 64) + "'"; }

// ---- Tokens

struct Token {
  enum class Kind : uint8_t { kEnd, kInt, kString, kIdent, kPunct };
  Kind kind = Kind::kEnd;
  std::string text;  // the identifier, the punctuation ("in" too), the unescaped string
  int64_t number = 0;
};

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> out;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const size_t start = i;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (s.substr(i, 2) == "//") {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (IsDigit(c)) {
      while (i < s.size() && IsDigit(s[i])) ++i;
      if (i < s.size() && (s[i] == '.' || IsIdentChar(s[i]))) {
        while (i < s.size() && (s[i] == '.' || IsIdentChar(s[i]))) ++i;
        throw Unsupported("literal " + Quoted(s.substr(start, i - start)) + " is not supported");
      }
      Token& t =
          out.emplace_back(Token{Token::Kind::kInt, std::string(s.substr(start, i - start))});
      if (std::from_chars(s.data() + start, s.data() + i, t.number).ec != std::errc()) {
        throw Unsupported("integer " + Quoted(t.text) + " out of range");
      }
    } else if (c == '"' || c == '\'') {
      if (s.substr(i, 3) == std::string(3, c)) throw Unsupported("triple quotes are not supported");
      Token& t = out.emplace_back(Token{Token::Kind::kString, ""});
      for (++i; i >= s.size() || s[i] != c; ++i) {
        if (i >= s.size() || s[i] == '\n') throw Unsupported("unterminated string");
        if (s[i] != '\\') {
          t.text += s[i];
          continue;
        }
        static constexpr std::string_view kEscapes = "\\'\"ntr", kMeanings = "\\'\"\n\t\r";
        size_t k = ++i < s.size() ? kEscapes.find(s[i]) : std::string_view::npos;
        if (k == std::string_view::npos) {
          throw Unsupported("escape " + Quoted(s.substr(i - 1, 2)) + " is not supported");
        }
        t.text += kMeanings[k];
      }
      ++i;
    } else if (IsIdentChar(c)) {
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      std::string word(s.substr(start, i - start));
      if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
        throw Unsupported("string prefix " + Quoted(word) + " is not supported");
      }
      out.push_back(Token{word == "in" ? Token::Kind::kPunct : Token::Kind::kIdent, word});
    } else {
      std::string_view two = s.substr(i, 2);
      i += IsOneOf(two, {"==", "!=", "<=", ">=", "&&", "||"}) ? 2 : 1;
      if (i == start + 1 &&
          std::string_view("<>!()[].,-+*/%?:{}").find(c) == std::string_view::npos) {
        throw Unsupported("unexpected character " + Quoted(s.substr(start, 1)));
      }
      out.push_back(Token{Token::Kind::kPunct, std::string(s.substr(start, i - start))});
    }
  }
  out.push_back(Token{});
  return out;
}

// ---- Parser: recursive descent, CEL's precedence (|| < && < relations < unary < member)

[[noreturn]] void UnsupportedCall(const std::string& name) {
  bool macro = IsOneOf(name, {"has", "all", "exists", "exists_one", "map", "filter"});
  throw Unsupported((macro ? "macro " : "function ") + Quoted(name) + " is not supported");
}

Node Make(Op op, std::vector<Node> kids = {}, std::string text = {}) {
  return Node{op, 0, false, std::move(text), std::move(kids)};
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Node Parse() {
    Node root = Operand(Or());
    if (Peek().kind != Token::Kind::kEnd) Unexpected();
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  bool IsPunct(std::string_view p) const {
    return Peek().kind == Token::Kind::kPunct && Peek().text == p;
  }
  bool Accept(std::string_view p) {
    if (!IsPunct(p)) return false;
    ++pos_;
    return true;
  }
  void Expect(std::string_view p) {
    if (!Accept(p)) Unexpected();
  }
  [[noreturn]] void Unexpected() const {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kEnd) throw Unsupported("unexpected end of expression");
    if (t.kind == Token::Kind::kPunct && IsOneOf(t.text, {"+", "-", "*", "/", "%", "?", ":"})) {
      throw Unsupported("operator " + Quoted(t.text) + " is not supported");
    }
    throw Unsupported("unexpected " + Quoted(t.text));
  }
  std::string Take(Token::Kind kind, std::string_view what) {
    if (Peek().kind != kind) {
      if (kind == Token::Kind::kString)
        throw Unsupported(std::string(what) + " takes only a string literal");
      Unexpected();
    }
    return tokens_[pos_++].text;
  }
  // Parentheses, arguments, unary operators and method calls nest: the depth bounds the parser's
  // recursion and the tree's.
  void Nest(int levels) {
    depth_ += levels;
    if (depth_ > static_cast<int>(kMaxDraSelectorDepth)) {
      throw Unsupported("nested deeper than " + std::to_string(kMaxDraSelectorDepth) + " levels");
    }
  }

  // device.attributes["d"] alone stands only on the right of 'in'.
  static Node Operand(Node n) {
    if (n.op == Op::kDomain) {
      throw Unsupported("device." + std::string(n.capacity ? "capacity" : "attributes") +
                        "[...] needs a name after it, or to stand on the right of 'in'");
    }
    return n;
  }

  Node Or() { return Chain("||", Op::kOr, &Parser::And); }
  Node And() { return Chain("&&", Op::kAnd, &Parser::Relation); }
  Node Chain(std::string_view p, Op op, Node (Parser::*next)()) {
    Node first = (this->*next)();
    if (!IsPunct(p)) return first;
    std::vector<Node> kids;
    kids.push_back(Operand(std::move(first)));
    while (Accept(p)) kids.push_back(Operand((this->*next)()));
    return Make(op, std::move(kids));
  }

  Node Relation() {
    Node left = Unary();
    if (Accept("in")) {
      Node right = Unary();
      if (right.op != Op::kDomain) {
        throw Unsupported("'in' takes only device.attributes[...] or device.capacity[...]");
      }
      return Make(Op::kIn, {Operand(std::move(left)), std::move(right)});
    }
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!Accept(op)) continue;
      Node n = Make(Op::kCompare, {Operand(std::move(left)), Operand(Unary())}, std::string(op));
      for (std::string_view again : {"==", "!=", "<=", ">=", "<", ">", "in"}) {
        if (IsPunct(again)) throw Unsupported("chained comparisons are not supported");
      }
      return n;
    }
    return left;
  }

  Node Unary() {
    if (Accept("!")) return UnaryOperation(Op::kNot);
    if (Accept("-")) return UnaryOperation(Op::kNegate);
    return Postfix();
  }
  Node UnaryOperation(Op op) {
    Nest(1);
    Node n = Make(op, {Operand(Unary())});
    Nest(-1);
    return n;
  }

  Node Postfix() {
    Node n = Primary();
    int nested = 0;
    while (Accept(".")) {
      std::string name = Take(Token::Kind::kIdent, "");
      if (!IsPunct("("))
        throw Unsupported("field selection " + Quoted("." + name) + " is not supported");
      if (!IsOneOf(name, {"compareTo", "isGreaterThan", "isLessThan", "startsWith", "endsWith",
                          "contains"})) {
        UnsupportedCall(name);
      }
      Nest(1);
      ++nested;
      n = Make(Op::kMethod, {Operand(std::move(n)), OneArgument(name)}, name);
    }
    if (IsPunct("[")) throw Unsupported("indexing is not supported");
    Nest(-nested);
    return n;
  }

  Node OneArgument(const std::string& function) {
    Expect("(");
    Nest(1);
    Node arg = Operand(Or());
    if (!Accept(")")) {
      if (IsPunct(",")) throw Unsupported(Quoted(function) + " takes one argument");
      Unexpected();
    }
    Nest(-1);
    return arg;
  }

  Node Primary() {
    const Token t = Peek();
    if (t.kind == Token::Kind::kInt || t.kind == Token::Kind::kString) {
      ++pos_;
      Node n = Make(t.kind == Token::Kind::kInt ? Op::kInt : Op::kString, {}, t.text);
      n.number = t.number;
      return n;
    }
    if (Accept("(")) {
      Nest(1);
      Node n = Or();
      Expect(")");
      Nest(-1);
      return n;
    }
    if (IsPunct("[") || IsPunct("{")) throw Unsupported("list and map literals are not supported");
    std::string name = Take(Token::Kind::kIdent, "");
    if (name == "true" || name == "false") {
      Node n = Make(Op::kBool);
      n.number = name == "true";
      return n;
    }
    if (IsPunct("(")) {
      if (name != "quantity" && name != "semver") UnsupportedCall(name);
      return Make(Op::kCall, {OneArgument(name)}, name);
    }
    if (name != "device") throw Unsupported("identifier " + Quoted(name) + " is not supported");
    Expect(".");
    std::string field = Take(Token::Kind::kIdent, "");
    if (field == "driver") return Make(Op::kDriver);
    if (field != "attributes" && field != "capacity") {
      throw Unsupported("field " + Quoted("device." + field) + " is not supported");
    }
    if (Accept(".")) {
      std::string name = Take(Token::Kind::kIdent, "");
      if (IsPunct("(")) UnsupportedCall(name);
      throw Unsupported("device." + field + " takes only an index");
    }
    Expect("[");
    std::string domain = Take(Token::Kind::kString, "device." + field + "[...]");
    Expect("]");
    std::string attribute;
    if (Accept(".")) {
      attribute = Take(Token::Kind::kIdent, "");
      if (IsPunct("(")) UnsupportedCall(attribute);
    } else if (Accept("[")) {
      attribute = Take(Token::Kind::kString, "device." + field + "[...][...]");
      Expect("]");
    } else {
      Node n = Make(Op::kDomain, {}, domain);
      n.capacity = field == "capacity";
      return n;
    }
    return Make(field == "capacity" ? Op::kCapacity : Op::kAttribute, {}, domain + "/" + attribute);
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

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

}  // namespace
}  // namespace dra_cel

DraSelector DraSelector::Compile(std::string_view expression) {
  DraSelector selector;
  if (expression.size() > kMaxDraSelectorBytes) {
    selector.reason_ = "longer than " + std::to_string(kMaxDraSelectorBytes) + " bytes";
    return selector;
  }
  try {
    dra_cel::Parser parser(dra_cel::Tokenize(expression));
    selector.root_ = std::make_shared<const Node>(parser.Parse());
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
