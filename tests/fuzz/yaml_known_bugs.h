// HitsKnownYamlBug: whether YamlDocumentsToJson would hang on the text by a bug reported but not
// fixed yet, so that the yaml_to_json fuzz target can step over it and look for others (the replay
// test keeps it in view through regressions/yaml_to_json/DISABLED_lone_comma): yaml-cpp 0.7's
// YAML::LoadAll (Debian 12's) loops forever, growing memory, on a token that cannot start a node,
// such as a lone "," (yaml-cpp issue #1040, fixed upstream after 0.8.0): it is never consumed,
// and every turn yields one more empty document.
//
// One pass of yaml-cpp's event parser, whose documents are those LoadAll builds, answers it: a
// document starting where the previous one did is the loop.
#ifndef GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_
#define GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_

#include <string_view>

namespace gpusched::fuzz {

bool HitsKnownYamlBug(std::string_view yaml);

}  // namespace gpusched::fuzz

#endif  // GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_
