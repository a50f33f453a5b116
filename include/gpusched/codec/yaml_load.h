// Loading YAML text into yaml-cpp nodes, for every YAML reader of gpusched (inventory, policy,
// scenario, kubeconfig), with limits that keep a small text from costing unbounded time, memory
// or stack:
//  - nesting deeper than kMaxYamlDepth is refused. yaml-cpp's parser itself stops at 2000 levels,
//    but an alias inside its own anchor (&a [*a]) makes a cycle, endless to anyone walking it;
//  - an alias counts once for every place it is used: the expanded size (1 per node plus the
//    length of each scalar) of all documents together must stay within kYamlExpansionFactor times
//    the text's size plus kYamlExpansionSlack, so an alias bomb ("billion laughs") fails at once
//    instead of after minutes and gigabytes.
// Within these limits readers may recurse over the nodes and follow aliases freely.
//
// Errors throw YamlError with the line and column, any input bytes in the message escaped; a reader
// reports it, or a yaml-cpp exception from reading the nodes, with YamlInputError.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpusched/util/input_error.h"

namespace gpusched {

inline constexpr int kMaxYamlDepth = 256;
inline constexpr size_t kYamlExpansionFactor = 16;
inline constexpr size_t kYamlExpansionSlack = size_t{1} << 20;

// An InputError like every reader's, so a front door catches it with the rest; without its source,
// which the reader adds with YamlInputError.
class YamlError : public InputError {
 public:
  // `line` and `column` count from 1; 0 when unknown. what() is "line L, column C: <problem>".
  YamlError(int line, int column, const std::string& problem);
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& problem() const { return problem_; }

 private:
  int line_;
  int column_;
  std::string problem_;
};

// `e` as an error in `source`, in the one style (gpusched/util/input_error.h): its line and column
// when known, its problem quoted.
std::string YamlInputError(std::string_view source, const YamlError& e);
std::string YamlInputError(std::string_view source, const YAML::Exception& e);

// Every document of `text` (several when separated by ---), empty ones included as null nodes.
std::vector<YAML::Node> LoadYamlDocuments(std::string_view text);
// The first document of `text`; a null node when there is none.
YAML::Node LoadYaml(std::string_view text);

}  // namespace gpusched
