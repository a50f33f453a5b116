// LoadAllWouldHang: whether yaml-cpp 0.7's YAML::LoadAll (Debian 12's) would loop forever on the
// text, as it does on a lone "," (yaml-cpp issue #1040, fixed upstream by pull request #1319 after
// 0.8.0): a token that cannot start a node is never consumed, and every turn of LoadAll's loop
// returns one more empty document, growing memory until the process dies.
//
// It reads the text with yaml-cpp's event parser, whose documents are the ones LoadAll builds, and
// answers true as soon as a document starts where the previous one did. The yaml_to_json fuzz
// target steps over such input while YamlDocumentsToJson still hangs on it (the replay test and
// regressions/yaml_to_json/DISABLED_lone_comma keep it in view).
#ifndef GPUSCHED_TESTS_FUZZ_YAML_CPP_HANG_H_
#define GPUSCHED_TESTS_FUZZ_YAML_CPP_HANG_H_

#include <string_view>

namespace gpusched::fuzz {

bool LoadAllWouldHang(std::string_view yaml);

}  // namespace gpusched::fuzz

#endif  // GPUSCHED_TESTS_FUZZ_YAML_CPP_HANG_H_
