#include "gpusched/codec/yaml_to_json.h"

#include <regex>

#include <yaml-cpp/yaml.h>

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

bool IsJsonNumber(const std::string& s) {
  static const std::regex kNumber(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  return std::regex_match(s, kNumber);
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
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw YamlError("line " + std::to_string(e.mark.line + 1) + ", column " +
                    std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  std::vector<std::string> out;
  for (const auto& doc : docs) {
    if (!doc.IsDefined() || doc.IsNull()) continue;
    std::string json;
    JsonWriter w(json);
    Write(w, doc);
    out.push_back(std::move(json));
  }
  return out;
}

}  // namespace gpusched
