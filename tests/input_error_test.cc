// Every reader of outside input reports in one style, SOURCE:LINE:COLUMN: KEY: PROBLEM
// (gpusched/util/input_error.h): the same YAML syntax error reads the same from each of them.
#include "gpusched/util/input_error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <tuple>

#include "gpusched/app/capacity_command.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/planning/mig_layouts.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/util/file_text.h"

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
  starts_with_place(Thrown([] { ParseInventory(kBrokenYaml, "broken.yaml"); }));

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

// The one transport's two halves meet: a Validated reader's problems cross a layer that throws as
// one InputError that keeps every line; context goes in front of a message, which stays whole.
TEST(InputError, carries_every_problem_and_adds_context_in_front) {
  Problems problems;
  ThrowIfAny(problems);  // none: nothing thrown
  problems.Add("p.yaml:1:1: a: first");
  problems.Add("p.yaml:2:1: b: second");
  try {
    ThrowIfAny(problems);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.lines(), problems.lines());
    EXPECT_EQ(std::string(e.what()), "p.yaml:1:1: a: first\np.yaml:2:1: b: second");
  }
  EXPECT_EQ(InputError("one line").lines(), std::vector<std::string>{"one line"});
  EXPECT_EQ(InContext("outer.yaml", InputError("inner.pem: no PEM data")),
            "outer.yaml: inner.pem: no PEM data");
}

// Files under a fresh temporary directory, removed with it.
class TempFiles {
 public:
  TempFiles() : dir_(std::filesystem::temp_directory_path() / "gpusched_input_error_files") {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TempFiles() { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, std::string_view text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

// A kubeconfig whose user "alice" has `user` (a flow mapping's contents).
std::string KubeconfigWithUser(const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "contexts:\n- name: c\n  context: {cluster: k, user: alice}\n"
         "clusters:\n- name: k\n  cluster: {server: \"https://127.0.0.1:1\"}\n"
         "users:\n- name: alice\n  user: {" +
         user + "}\n";
}

// A file or a field the kubeconfig names fails with the kubeconfig, the entry and the key in front
// of the inner error, which is kept whole.
TEST(InputError, a_kubeconfig_keeps_the_inner_error_behind_its_place) {
  TempFiles files;
  std::string bad_data = files.Write("data.yaml", KubeconfigWithUser("client-key-data: \"@@@\""));
  EXPECT_EQ(Thrown([&] { LoadKubeconfig(bad_data); }),
            bad_data + ": user \"alice\": client-key-data: invalid base64 data");

  std::string missing = files.Path("missing.pem");
  std::string inner = Thrown([&] { ReadFileText(missing, 1024, "client key"); });
  ASSERT_FALSE(inner.empty());
  std::string bad_file = files.Write("file.yaml", KubeconfigWithUser("client-key: missing.pem"));
  EXPECT_EQ(Thrown([&] { LoadKubeconfig(bad_file); }),
            bad_file + ": user \"alice\": client-key: client key: " + inner);
}

// What `RunCapacityCommand(args)` prints to stderr, and its exit status.
std::pair<int, std::string> CapacityErrors(const std::vector<std::string>& args) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");  // never the in-cluster path
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int status = RunCapacityCommand(args);
  std::cout.flush();
  ::testing::internal::GetCapturedStdout();
  return {status, ::testing::internal::GetCapturedStderr()};
}

// The inner errors survive every layer into what the command prints, once, at its edge.
TEST(InputError, the_command_prints_the_inner_error_whole_and_once) {
  TempFiles files;
  std::string cluster = files.Write("cluster.yaml", kBrokenYaml);
  auto [status, err] = CapacityErrors({"--cluster", cluster});
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err.substr(0, 10 + cluster.size() + 6), "gpusched: " + cluster + ":2:1: ") << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  std::string kubeconfig =
      files.Write("kubeconfig.yaml", KubeconfigWithUser("client-key-data: \"@@@\""));
  std::tie(status, err) = CapacityErrors({"--kubeconfig", kubeconfig});
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err,
            "gpusched: " + kubeconfig + ": user \"alice\": client-key-data: invalid base64 data\n");

  std::string policy = files.Write("policy.yaml", kBrokenYaml);
  std::tie(status, err) = CapacityErrors({"--policy", policy});
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err.substr(0, 10 + policy.size() + 6), "gpusched: " + policy + ":2:1: ") << err;
  std::string last = "gpusched: invalid policy " + policy + "\n";
  EXPECT_EQ(err.substr(err.size() - last.size()), last) << err;
}

}  // namespace
}  // namespace gpusched::input_error_test
