// HitsKnownYamlBug: whether YamlDocumentsToJson would fail on the text by one of two bugs reported
// but not fixed yet, so that the yaml_to_json fuzz target can step over them and look for others
// (the replay test keeps both in view through regressions/yaml_to_json/DISABLED_*):
//
//  - yaml-cpp 0.7's YAML::LoadAll (Debian 12's) loops forever, growing memory, on a token that
//    cannot start a node, such as a lone "," (yaml-cpp issue #1040, fixed upstream after 0.8.0):
//    it is never consumed, and every turn yields one more empty document. DISABLED_lone_comma.
//  - An alias inside the node its anchor names (a: &x {b: *x}) makes a cyclic node graph, and
//    writing it as JSON recurses until the stack overflows. DISABLED_alias_inside_its_anchor.yaml.
//
// One pass of yaml-cpp's event parser, whose documents are those LoadAll builds, answers both: a
// document starting where the previous one did is the loop; an alias naming an anchor whose
// collection is still open is the cycle.
#ifndef GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_
#define GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_

#include <string_view>

namespace gpusched::fuzz {

bool HitsKnownYamlBug(std::string_view yaml);

}  // namespace gpusched::fuzz

#endif  // GPUSCHED_TESTS_FUZZ_YAML_KNOWN_BUGS_H_
