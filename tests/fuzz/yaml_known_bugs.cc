#include "fuzz/yaml_known_bugs.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace gpusched::fuzz {
namespace {

// Notes where each document's first node starts, and whether an alias names an open anchor.
class Watcher : public YAML::EventHandler {
 public:
  int first_pos = -1;
  bool cycle = false;

  void OnDocumentStart(const YAML::Mark&) override {
    first_pos = -1;
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Note(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Note(mark);
    cycle = cycle || std::find(open_.begin(), open_.end(), anchor) != open_.end();
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Note(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  void Note(const YAML::Mark& mark) {
    if (first_pos < 0) first_pos = mark.pos;
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Note(mark);
    open_.push_back(anchor);  // 0 (no anchor) is never an alias's
  }

  std::vector<YAML::anchor_t> open_;  // the anchors of the collections being read
};

}  // namespace

bool HitsKnownYamlBug(std::string_view yaml) {
  std::istringstream in{std::string(yaml)};
  try {
    YAML::Parser parser(in);
    Watcher watcher;
    int previous = -1;
    size_t documents = 0;
    while (parser.HandleNextDocument(watcher)) {
      if (watcher.cycle) return true;
      if (watcher.first_pos >= 0 && watcher.first_pos == previous) return true;
      // Every real document takes at least one byte: more than that is a loop that names no node.
      if (++documents > yaml.size() + 1) return true;
      previous = watcher.first_pos;
    }
  } catch (const YAML::Exception&) {
    // LoadAll throws the same error: YamlDocumentsToJson reports it as a YamlError.
  }
  return false;
}

}  // namespace gpusched::fuzz
