#include "gpusched/policy/policy_watcher.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/policy/policy_file.h"

namespace gpusched {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Policy(int weight) {
  return "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\nplugins:\n  gpu-binpack: "
         "{weight: " +
         std::to_string(weight) + "}\n";
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream out(p.string() + ".tmp", std::ios::binary);
  out << text;
  out.close();
  fs::rename(p.string() + ".tmp", p);  // replace atomically, as editors and kubelet do
}

// Polls `done` every 10 ms for at most 5 s.
template <class F>
bool WaitFor(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

double BinpackWeight(const Published<gpusched::Policy>& p) {
  return p.Get()->spec().profiles[0].plugins.at("gpu-binpack").weight;
}

class PolicyWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpusched-policy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PolicyWatcherTest, good_bad_good_keeps_the_last_good_policy_in_between) {
  fs::path file = dir_ / "policy.yaml";
  Write(file, Policy(2));
  std::vector<std::string> errors;
  auto initial = LoadPolicy(file.string(), errors);
  ASSERT_TRUE(initial) << errors[0];
  Published<gpusched::Policy> published(initial);
  PolicyWatcher watcher(file.string(), published, 20ms);
  EXPECT_EQ(BinpackWeight(published), 2);

  Write(file, Policy(2) + "bogus: key\n");
  ASSERT_TRUE(WaitFor([&] { return watcher.failures() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 2);
  EXPECT_EQ(published.Get()->digest(), initial->digest());

  Write(file, Policy(7));
  ASSERT_TRUE(WaitFor([&] { return watcher.reloads() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 7);
  EXPECT_EQ(watcher.failures(), 1u);  // the same bad text was reported once
}

TEST_F(PolicyWatcherTest, follows_a_configmap_symlink_swap) {
  // kubelet's layout: policy.yaml -> ..data/policy.yaml, ..data -> ..<timestamp>/
  fs::create_directories(dir_ / "..v1");
  fs::create_directories(dir_ / "..v2");
  Write(dir_ / "..v1" / "policy.yaml", Policy(3));
  Write(dir_ / "..v2" / "policy.yaml", Policy(9));
  fs::create_directory_symlink("..v1", dir_ / "..data");
  fs::create_symlink("..data/policy.yaml", dir_ / "policy.yaml");
  std::string path = (dir_ / "policy.yaml").string();
  std::vector<std::string> errors;
  Published<gpusched::Policy> published(LoadPolicy(path, errors));
  ASSERT_TRUE(published.Get());
  PolicyWatcher watcher(path, published, 20ms);
  EXPECT_EQ(BinpackWeight(published), 3);

  fs::create_directory_symlink("..v2", dir_ / "..data_tmp");
  fs::rename(dir_ / "..data_tmp", dir_ / "..data");
  ASSERT_TRUE(WaitFor([&] { return watcher.reloads() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 9);
}

TEST(LoadPolicy, reports_unreadable_and_invalid_files) {
  std::vector<std::string> errors;
  EXPECT_EQ(LoadPolicy("/nonexistent/policy.yaml", errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace gpusched
