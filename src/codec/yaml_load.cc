#include "gpusched/codec/yaml_load.h"

#include <sstream>
#include <string>
#include <utility>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

std::string Where(int line, int column) {
  return line > 0 ? "line " + std::to_string(line) + ", column " + std::to_string(column) + ": "
                  : "";
}

// A yaml-cpp mark as 1-based line and column; 0, 0 when it has none.
std::pair<int, int> LineAndColumn(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return {0, 0};
  return {mark.line + 1, mark.column + 1};
}

YamlError ErrorAt(const YAML::Mark& mark, const std::string& problem) {
  auto [line, column] = LineAndColumn(mark);
  return YamlError(line, column, problem);
}

// Walks the documents as a reader would, aliases expanded, and throws once the walk goes deeper
// than kMaxYamlDepth or spends the budget. Iterative, so the walk itself needs no stack; it stops
// at the budget, so a cycle or a bomb costs no more than the budget.
class ExpansionBudget {
 public:
  explicit ExpansionBudget(size_t text_size)
      : limit_(kYamlExpansionFactor * text_size + kYamlExpansionSlack), left_(limit_) {}

  void Check(const YAML::Node& root) {
    std::vector<std::pair<YAML::Node, int>> pending{{root, 1}};
    while (!pending.empty()) {
      auto [node, depth] = std::move(pending.back());
      pending.pop_back();
      Spend(node);
      if (!node.IsMap() && !node.IsSequence()) continue;
      if (depth == kMaxYamlDepth && node.size() > 0) {
        throw ErrorAt(node.Mark(), "nested deeper than " + std::to_string(kMaxYamlDepth) +
                                       " levels (or an alias inside its own anchor)");
      }
      if (node.IsMap()) {
        for (const auto& kv : node) {
          pending.emplace_back(kv.first, depth + 1);
          pending.emplace_back(kv.second, depth + 1);
        }
      } else {
        for (const auto& item : node) pending.emplace_back(item, depth + 1);
      }
    }
  }

 private:
  void Spend(const YAML::Node& node) {
    size_t cost = 1 + (node.IsScalar() ? node.Scalar().size() : 0);
    if (cost > left_) {
      throw ErrorAt(node.Mark(), "alias expansion exceeds the limit of " + std::to_string(limit_) +
                                     " bytes (" + std::to_string(kYamlExpansionFactor) +
                                     " times the size of the text plus 1 MiB)");
    }
    left_ -= cost;
  }

  size_t limit_;
  size_t left_;
};

// Runs `load` (a yaml-cpp parse), turning its exceptions into YamlError.
template <class F>
auto Parse(F&& load) -> decltype(load()) {
  try {
    return load();
  } catch (const YAML::DeepRecursion& e) {  // its message says only "bad file"
    throw ErrorAt(e.mark, "nested deeper than " + std::to_string(e.depth()) + " levels");
  } catch (const YAML::Exception& e) {
    throw ErrorAt(e.mark, QuoteForMessage(e.msg));
  }
}

// Notes where each document's first node starts, for LoopsForever.
class FirstNode : public YAML::EventHandler {
 public:
  int pos = -1;

  void OnDocumentStart(const YAML::Mark&) override { pos = -1; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Note(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Note(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Note(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Note(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Note(mark);
  }
  void OnMapEnd() override {}

 private:
  void Note(const YAML::Mark& mark) {
    if (pos < 0) pos = mark.pos;
  }
};

// Whether yaml-cpp 0.7's LoadAll (Debian 12's) would loop forever on `text`, growing memory: on a
// token that cannot start a node, such as a lone ",", it never consumes the token and yields one
// more empty document every turn (yaml-cpp issue #1040, fixed upstream after 0.8.0). One pass of
// its event parser, whose documents are those LoadAll builds, tells: a document that starts where
// the previous one did, or more documents than bytes, is that loop.
bool LoopsForever(std::string_view text) {
  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    FirstNode document;
    int previous = -1;
    size_t documents = 0;
    while (parser.HandleNextDocument(document)) {
      if (document.pos >= 0 && document.pos == previous) return true;
      if (++documents > text.size() + 1) return true;
      previous = document.pos;
    }
  } catch (const YAML::Exception&) {
    // LoadAll throws the same error, which Parse reports.
  }
  return false;
}

}  // namespace

YamlError::YamlError(int line, int column, const std::string& problem)
    : InputError(Where(line, column) + problem), line_(line), column_(column), problem_(problem) {}

std::vector<YAML::Node> LoadYamlDocuments(std::string_view text) {
  if (LoopsForever(text)) {
    throw YamlError(0, 0, "a token that cannot start a YAML node (such as a lone ',')");
  }
  std::vector<YAML::Node> docs = Parse([&] { return YAML::LoadAll(std::string(text)); });
  ExpansionBudget budget(text.size());
  for (const auto& doc : docs) budget.Check(doc);
  return docs;
}

YAML::Node LoadYaml(std::string_view text) {
  YAML::Node doc = Parse([&] { return YAML::Load(std::string(text)); });
  ExpansionBudget(text.size()).Check(doc);
  return doc;
}

std::string YamlInputError(std::string_view source, const YamlError& e) {
  return FormatInputError(source, e.line(), e.column(), "", QuoteForMessage(e.problem(), 512));
}

std::string YamlInputError(std::string_view source, const YAML::Exception& e) {
  auto [line, column] = LineAndColumn(e.mark);
  return FormatInputError(source, line, column, "", QuoteForMessage(e.msg, 512));
}

}  // namespace gpusched
