// Every reader of outside input reports in one style, SOURCE:LINE:COLUMN: KEY: PROBLEM
// (gpusched/util/input_error.h): the same YAML syntax error reads the same from each of them.
#include "gpusched/util/input_error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/planning/mig_layouts.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/scenario.h"

namespace gpusched::input_error_test {
namespace {

TEST(InputError, leaves_out_what_is_unknown) {
  EXPECT_EQ(FormatInputError("f.yaml", 3, 7, "a.b", "must be a number"),
            "f.yaml:3:7: a.b: must be a number");
  EXPECT_EQ(FormatInputError("f.csv", 12, 0, "cpu", "not a whole number"),
            "f.csv:12: cpu: not a whole number");
  EXPECT_EQ(FormatInputError("f.yaml", 0, 0, "", "empty policy file"), "f.yaml: empty policy file");
  EXPECT_EQ(InputError("f", 1, 2, "", "bad").what(), std::string("f:1:2: bad"));
}

std::string Thrown(const std::function<void()>& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// An unterminated flow sequence on line 2, column 1 of every reader's file.
constexpr std::string_view kBrokenYaml = "a: [\n";
constexpr std::string_view kWhere = "broken.yaml:2:1: ";

TEST(InputError, every_yaml_reader_places_a_syntax_error_alike) {
  auto starts_with_place = [](const std::string& error) {
    EXPECT_EQ(error.substr(0, kWhere.size()), kWhere) << error;
  };
  Validated<PolicySpec> policy = ParsePolicy(kBrokenYaml, "broken.yaml");
  ASSERT_EQ(policy.problems.lines().size(), 1u);
  starts_with_place(policy.problems.lines()[0]);
  Validated<MigLayouts> layouts = ParseMigLayouts(kBrokenYaml, "broken.yaml");
  ASSERT_EQ(layouts.problems.lines().size(), 1u);
  starts_with_place(layouts.problems.lines()[0]);
  starts_with_place(Thrown([] { ParseScenario(kBrokenYaml, "broken.yaml"); }));

  auto dir = std::filesystem::temp_directory_path() / "gpusched_input_error_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "broken.yaml").string();
  std::ofstream(path) << kBrokenYaml;
  std::string kubeconfig = Thrown([&] { LoadKubeconfig(path); });
  EXPECT_EQ(kubeconfig.substr(0, path.size() + 6), path + ":2:1: ") << kubeconfig;
  std::filesystem::remove_all(dir);
}

TEST(InputError, a_trace_names_line_and_column_name) {
  std::string error = Thrown([] {
    ParseOpenbNodes("sn,cpu_milli,memory_mib,num_gpu,gpu_model\nn1,x,1,0,\n", "nodes.csv");
  });
  EXPECT_EQ(error.substr(0, 23), "nodes.csv:2: cpu_milli:") << error;
}

// One transport: what the codecs throw is an InputError too, so a front door that catches
// InputError misses none of them.
TEST(InputError, the_codecs_errors_are_input_errors) {
  EXPECT_THROW(LoadYaml(kBrokenYaml), InputError);
  EXPECT_EQ(Thrown([] { LoadYaml(kBrokenYaml); }).substr(0, 16), "line 2, column 1");
  std::string decode = Thrown([] {
    simdjson::ondemand::parser parser;
    simdjson::padded_string json(std::string_view(
        R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"many"}}}]}})"));
    simdjson::ondemand::document doc = parser.iterate(json);
    WithContext("pod", [&] { return DecodePod(doc.get_object()); });
  });
  EXPECT_EQ(decode.substr(0, 5), "pod: ") << decode;
}

}  // namespace
}  // namespace gpusched::input_error_test
