// Conversion of YAML documents to JSON text, so Kubernetes objects written as YAML go through the
// same decoders as the wire JSON.
//
// Quoted scalars become JSON strings; unquoted ones become null, true/false or a number when they
// read as such in YAML 1.2's core schema and fit JSON's grammar, and strings otherwise. Aliases are
// expanded, within the limits of LoadYamlDocuments (yaml_load.h). Throws YamlError with the line
// and column of a syntax error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/codec/yaml_load.h"

namespace gpusched {

// One JSON text per YAML document in `yaml` (several when separated by ---); empty documents are
// skipped.
std::vector<std::string> YamlDocumentsToJson(std::string_view yaml);

}  // namespace gpusched
