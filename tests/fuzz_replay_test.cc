// Replays every committed fuzz input through the check its fuzz target runs (fuzz/fuzz_checks.h):
// the hand-written seeds in tests/fuzz/seeds/<target>/ and the reproducers of crashes found, in
// tests/fuzz/regressions/<target>/. One test per file, FuzzReplay.<target>_<dir>_<file>, so a
// failure names its input; a crash takes the test binary down, as it takes the fuzzer. A file
// whose name starts with DISABLED_ reproduces a bug not fixed yet: its test is registered
// disabled (run it with --gtest_also_run_disabled_tests).
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "fuzz/fuzz_checks.h"

namespace gpusched::fuzz {
namespace {

namespace fs = std::filesystem;

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Test names hold letters, digits and underscores only.
std::string Identifier(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

class Replay : public ::testing::Test {
 public:
  Replay(FuzzCheck check, fs::path input) : check_(check), input_(std::move(input)) {}
  void TestBody() override {
    SCOPED_TRACE(input_.string());
    check_.check(Contents(input_));
  }

 private:
  FuzzCheck check_;
  fs::path input_;
};

// Registers the tests before main runs, like the TEST macro.
const bool kRegistered = [] {
  const fs::path root = fs::path(GPUSCHED_SOURCE_DIR) / "tests" / "fuzz";
  for (const FuzzCheck& check : AllFuzzChecks()) {
    for (const char* kind : {"seeds", "regressions"}) {
      fs::path dir = root / kind / std::string(check.name);
      if (!fs::is_directory(dir)) continue;
      for (const auto& entry : fs::directory_iterator(dir)) {
        std::string file = entry.path().filename().string();
        bool disabled = file.starts_with("DISABLED_");
        std::string name = (disabled ? "DISABLED_" : "") + std::string(check.name) + "_" + kind +
                           "_" + Identifier(disabled ? file.substr(9) : file);
        ::testing::RegisterTest(
            "FuzzReplay", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
            [check, path = entry.path()]() -> ::testing::Test* { return new Replay(check, path); });
      }
    }
  }
  return true;
}();

// A fuzz target is a file tests/fuzz/<name>_fuzz.cc (the fuzz build and scripts/fuzz.sh find them
// by that name) and a check of that name here: neither without the other.
TEST(FuzzTargets, every_check_has_its_target_file_and_every_target_file_its_check) {
  const fs::path root = fs::path(GPUSCHED_SOURCE_DIR) / "tests" / "fuzz";
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string file = entry.path().filename().string();
    if (file.ends_with("_fuzz.cc")) files.insert(file.substr(0, file.size() - 8));
  }
  std::set<std::string> checks;
  for (const FuzzCheck& check : AllFuzzChecks()) {
    checks.insert(std::string(check.name));
    EXPECT_NE(
        Contents(root / (std::string(check.name) + "_fuzz.cc")).find("LLVMFuzzerTestOneInput"),
        std::string::npos)
        << check.name;
  }
  EXPECT_EQ(files, checks);
  EXPECT_GE(checks.size(), 16u);
}

}  // namespace
}  // namespace gpusched::fuzz
