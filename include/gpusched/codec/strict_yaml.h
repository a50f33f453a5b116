// StrictYamlReader: reads a YAML document the strict way both of our YAML inputs (policy files,
// packing scenarios) want: unknown keys refused with the allowed ones named, types checked, no
// implicit conversions (a quoted "true" is not a bool), and every error one line naming the file,
// line, column and key path: FILE:LINE:COLUMN: PATH: PROBLEM, quoted so that bytes from the file
// cannot forge lines. It collects errors as Problems (gpusched/util/validated.h; at most
// kMaxErrors, since aliases can repeat one bad key many times over); a caller that wants to stop at
// the first reads problems().lines().front(). Not synchronized.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/util/validated.h"

namespace gpusched {

class StrictYamlReader {
 public:
  static constexpr size_t kMaxErrors = 100;

  explicit StrictYamlReader(std::string_view file) : file_(file) {}

  // Records PATH: MESSAGE at `at`'s position.
  void Error(const YAML::Node& at, const std::string& path, const std::string& message);
  // Records MESSAGE for the file as a whole (no position).
  void ErrorAtDocument(const std::string& message) { Add(0, 0, message); }
  // Records FILE[:LINE:COLUMN]: TEXT, `text` already quoted (a syntax error's, say); line 0: none.
  void Add(int line, int column, const std::string& text);

  // Reports keys of `node` that are not in `allowed`; false (and an error) if it is not a map.
  bool Map(const YAML::Node& node, const std::string& path,
           std::initializer_list<std::string_view> allowed) {
    return Map(node, path, std::vector<std::string_view>(allowed));
  }
  bool Map(const YAML::Node& node, const std::string& path,
           const std::vector<std::string_view>& allowed);

  // Each returns nullopt, with an error, when `node` is not of the type.
  std::optional<std::string> String(const YAML::Node& node, const std::string& path);
  std::optional<bool> Bool(const YAML::Node& node, const std::string& path);
  // A decimal number in [min, max].
  std::optional<double> Number(const YAML::Node& node, const std::string& path, double min,
                               double max);
  // A sequence of strings, or one string of comma-separated items.
  std::optional<std::vector<std::string>> StringList(const YAML::Node& node,
                                                     const std::string& path);

  // "a.b" from "a" and "b"; "b" when `path` is empty.
  static std::string Join(const std::string& path, const std::string& key);
  // `v` as a short decimal ("1000000", "0.5").
  static std::string Num(double v);

  Problems& problems() { return problems_; }

 private:
  std::string_view file_;
  Problems problems_;
};

}  // namespace gpusched
