#include "gpusched/codec/yaml_to_json.h"

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

// JSON's number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, in one pass: std::regex
// matches recursively, one stack frame per character, and a long digit string overflowed it.
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  size_t int_start = i;
  size_t int_digits = digits();
  if (int_digits == 0 || (int_digits > 1 && s[int_start] == '0')) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

void WriteScalar(JsonWriter& w, const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") {  // quoted
    w.String(s);
  } else if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) {
    w.Null();
  } else if (s == "true" || s == "True" || s == "TRUE") {
    w.Bool(true);
  } else if (s == "false" || s == "False" || s == "FALSE") {
    w.Bool(false);
  } else if (IsJsonNumber(s)) {
    w.Raw(s);
  } else {
    w.String(s);
  }
}

// Recursive: LoadYamlDocuments has bounded the depth (and the expanded size) of every document.
void Write(JsonWriter& w, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      w.BeginObject();
      for (const auto& kv : node) {
        w.Key(kv.first.Scalar());
        Write(w, kv.second);
      }
      w.EndObject();
      break;
    case YAML::NodeType::Sequence:
      w.BeginArray();
      for (const auto& item : node) Write(w, item);
      w.EndArray();
      break;
    case YAML::NodeType::Scalar:
      WriteScalar(w, node);
      break;
    default:
      w.Null();
  }
}

}  // namespace

std::vector<std::string> YamlDocumentsToJson(std::string_view yaml) {
  std::vector<std::string> out;
  for (const auto& doc : LoadYamlDocuments(yaml)) {
    if (!doc.IsDefined() || doc.IsNull()) continue;
    std::string json;
    JsonWriter w(json);
    Write(w, doc);
    out.push_back(std::move(json));
  }
  return out;
}

}  // namespace gpusched
