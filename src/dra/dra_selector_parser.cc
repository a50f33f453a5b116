// The parser of DRA device selectors: the CEL subset dra/dra_selector.h lists, from text to the
// tree of dra_selector_tree.h, anything else refused as Unsupported with what it is.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "dra_selector_tree.h"
#include "gpusched/util/quote.h"

namespace gpusched::dra_cel {
namespace {

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

}  // namespace

Node ParseSelector(std::string_view expression) { return Parser(Tokenize(expression)).Parse(); }

}  // namespace gpusched::dra_cel
