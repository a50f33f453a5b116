#include "gpusched/codec/strict_yaml.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "gpusched/model/gpu_requirements.h"
#include "gpusched/util/input_error.h"
#include "gpusched/util/quote.h"
#include "gpusched/util/text.h"

namespace gpusched {

void StrictYamlReader::Error(const YAML::Node& at, const std::string& path,
                             const std::string& message) {
  YAML::Mark mark = at.Mark();
  Add(mark.line >= 0 ? mark.line + 1 : 0, mark.column + 1,
      (path.empty() ? "" : QuoteForMessage(path) + ": ") + QuoteForMessage(message, 512));
}

void StrictYamlReader::Add(int line, int column, const std::string& text) {
  size_t count = problems_.lines().size();
  if (count > kMaxErrors) return;
  problems_.Add(count < kMaxErrors ? FormatInputError(file_, line, column, "", text)
                                   : FormatInputError(file_, 0, 0, "",
                                                      "more than " + std::to_string(kMaxErrors) +
                                                          " errors; the rest are not shown"));
}

bool StrictYamlReader::Map(const YAML::Node& node, const std::string& path,
                           const std::vector<std::string_view>& allowed) {
  if (!node.IsMap()) {
    Error(node, path, "must be a mapping");
    return false;
  }
  for (const auto& kv : node) {
    std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Error(kv.first, Join(path, key), "unknown key (allowed: " + list + ")");
    }
  }
  return true;
}

std::optional<std::string> StrictYamlReader::String(const YAML::Node& node,
                                                    const std::string& path) {
  if (!node.IsScalar()) {
    Error(node, path, "must be a string");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> StrictYamlReader::Bool(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && node.Tag() != "!") {
    if (node.Scalar() == "true") return true;
    if (node.Scalar() == "false") return false;
  }
  Error(node, path, "must be true or false");
  return std::nullopt;
}

std::optional<double> StrictYamlReader::Number(const YAML::Node& node, const std::string& path,
                                               double min, double max) {
  if (node.IsScalar() && node.Tag() != "!") {
    const std::string& s = node.Scalar();
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) {
      if (v >= min && v <= max) return v;
      Error(node, path, "must be within " + Num(min) + ".." + Num(max) + ", got " + s);
      return std::nullopt;
    }
  }
  Error(node, path, "must be a number");
  return std::nullopt;
}

std::optional<std::vector<std::string>> StrictYamlReader::StringList(const YAML::Node& node,
                                                                     const std::string& path) {
  if (node.IsScalar()) return SplitList(node.Scalar());  // "a,b" is accepted as a list
  if (!node.IsSequence()) {
    Error(node, path, "must be a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    if (auto s = String(node[i], path + "[" + std::to_string(i) + "]")) out.push_back(*s);
  }
  return out;
}

std::string StrictYamlReader::Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string StrictYamlReader::Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace gpusched
