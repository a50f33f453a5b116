#include "gpusched/util/file_change.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "gpusched/util/file_text.h"

namespace gpusched::file_change_test {
namespace {

namespace fs = std::filesystem;

class FileChangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpusched-file-change-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "watched").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& text) { std::ofstream(path_, std::ios::binary) << text; }
  static std::string Read(const std::string& path) { return ReadFileText(path, 1024, "test file"); }

  fs::path dir_;
  std::string path_;
};

TEST_F(FileChangeTest, a_change_is_a_different_text) {
  Write("one");
  FileChange file(path_, Read);
  EXPECT_EQ(file.last(), nullptr);
  const FileChange::Look* first = file.Check();
  ASSERT_NE(first, nullptr) << "the first look is a change";
  EXPECT_TRUE(first->read());
  EXPECT_EQ(first->text, "one");
  EXPECT_EQ(file.Check(), nullptr);
  // Same size, written at once: a modification time could miss it, the text does not.
  Write("two");
  const FileChange::Look* second = file.Check();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->text, "two");
  EXPECT_EQ(file.last()->text, "two");
}

TEST_F(FileChangeTest, a_fault_left_in_place_is_one_change_and_a_recovery_another) {
  Write("text");
  FileChange file(path_, Read);
  ASSERT_NE(file.Check(), nullptr);
  fs::remove(path_);
  const FileChange::Look* missing = file.Check();
  ASSERT_NE(missing, nullptr);
  EXPECT_FALSE(missing->read());
  ASSERT_EQ(missing->problems.lines().size(), 1u);
  EXPECT_NE(missing->problems.lines()[0].find(path_), std::string::npos)
      << missing->problems.lines()[0];
  EXPECT_EQ(missing->identity, "");
  EXPECT_EQ(file.Check(), nullptr) << "the same fault again";
  fs::create_directory(path_);  // another fault: a directory at the path
  const FileChange::Look* directory = file.Check();
  ASSERT_NE(directory, nullptr);
  EXPECT_NE(directory->identity, "");
  fs::remove(path_);
  Write("text");
  const FileChange::Look* back = file.Check();
  ASSERT_NE(back, nullptr) << "readable again with the old text";
  EXPECT_EQ(back->text, "text");
}

TEST_F(FileChangeTest, any_exception_of_the_reader_is_an_unreadable_file) {
  FileChange file(path_, [](const std::string&) -> std::string { throw std::bad_alloc(); });
  const FileChange::Look* look = file.Check();
  ASSERT_NE(look, nullptr);
  EXPECT_FALSE(look->read());
}

}  // namespace
}  // namespace gpusched::file_change_test
