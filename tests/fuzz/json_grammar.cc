#include "fuzz/json_grammar.h"

#include <simdjson.h>

namespace gpusched::fuzz {
namespace {

// A recursive-descent recognizer: each method consumes one production at pos_ or returns false.
class Recognizer {
 public:
  explicit Recognizer(std::string_view text) : s_(text) {}

  bool Text() {
    Space();
    if (!Value()) return false;
    Space();
    return pos_ == s_.size();
  }

 private:
  bool At(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool Eat(char c) {
    if (!At(c)) return false;
    ++pos_;
    return true;
  }
  bool EatWord(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void Space() {
    while (At(' ') || At('\t') || At('\n') || At('\r')) ++pos_;
  }
  bool Digit() const { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; }
  bool Digits() {
    if (!Digit()) return false;
    while (Digit()) ++pos_;
    return true;
  }
  bool Hex() {
    if (pos_ >= s_.size()) return false;
    char c = s_[pos_++];
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  bool Value() {
    if (At('{')) return Object();
    if (At('[')) return Array();
    if (At('"')) return String();
    if (At('-') || Digit()) return Number();
    return EatWord("true") || EatWord("false") || EatWord("null");
  }
  bool Object() {
    Eat('{');
    Space();
    if (Eat('}')) return true;
    do {
      Space();
      if (!String()) return false;
      Space();
      if (!Eat(':')) return false;
      Space();
      if (!Value()) return false;
      Space();
    } while (Eat(','));
    return Eat('}');
  }
  bool Array() {
    Eat('[');
    Space();
    if (Eat(']')) return true;
    do {
      Space();
      if (!Value()) return false;
      Space();
    } while (Eat(','));
    return Eat(']');
  }
  bool String() {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (pos_ >= s_.size()) return false;
      char e = s_[pos_++];
      if (e == 'u') {
        for (int i = 0; i < 4; ++i)
          if (!Hex()) return false;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  bool Number() {
    Eat('-');
    if (!Eat('0') && !Digits()) return false;
    if (Eat('.') && !Digits()) return false;
    if (Eat('e') || Eat('E')) {
      if (!Eat('+')) Eat('-');
      if (!Digits()) return false;
    }
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

bool IsJsonText(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size()) && MatchesJsonGrammar(text);
}

bool MatchesJsonGrammar(std::string_view text) { return Recognizer(text).Text(); }

}  // namespace gpusched::fuzz
