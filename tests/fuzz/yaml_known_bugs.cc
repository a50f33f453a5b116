#include "fuzz/yaml_known_bugs.h"

#include <sstream>
#include <string>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace gpusched::fuzz {
namespace {

// Notes where each document's first node starts.
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

}  // namespace

bool HitsKnownYamlBug(std::string_view yaml) {
  std::istringstream in{std::string(yaml)};
  try {
    YAML::Parser parser(in);
    FirstNode document;
    int previous = -1;
    size_t documents = 0;
    while (parser.HandleNextDocument(document)) {
      if (document.pos >= 0 && document.pos == previous) return true;
      // Every real document takes at least one byte: more than that is a loop that names no node.
      if (++documents > yaml.size() + 1) return true;
      previous = document.pos;
    }
  } catch (const YAML::Exception&) {
    // LoadAll throws the same error: YamlDocumentsToJson reports it as a YamlError.
  }
  return false;
}

}  // namespace gpusched::fuzz
