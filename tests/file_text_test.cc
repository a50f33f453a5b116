#include "gpusched/util/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

namespace fs = std::filesystem;

class FileText : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpusched-file-text-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // The message of the FileError ReadFileText throws, or "no error".
  static std::string Error(const std::string& path, size_t max_bytes) {
    try {
      ReadFileText(path, max_bytes, "test file");
    } catch (const FileError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

TEST_F(FileText, reads_a_file_within_the_cap) {
  std::string text("a\0b\n", 4);
  EXPECT_EQ(ReadFileText(Write("ok", text), 4, "test file"), text);
  EXPECT_EQ(ReadFileText(Write("empty", ""), 0, "test file"), "");
}

TEST_F(FileText, refuses_a_directory) {
  EXPECT_EQ(Error(dir_.string(), 100), dir_.string() + " is a directory");
}

TEST_F(FileText, refuses_a_regular_file_over_the_cap_naming_both_sizes) {
  std::string path = Write("big", std::string(101, 'x'));
  EXPECT_EQ(Error(path, 100), path + " is 101 bytes; the limit for a test file is 100 bytes");
}

TEST_F(FileText, reads_a_pipe_only_up_to_the_cap) {
  std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // One write of less than the pipe's 64 KiB buffer: done before the reader stops reading.
  std::thread writer([&] {
    int fd = ::open(path.c_str(), O_WRONLY);
    std::string text(5000, 'x');
    EXPECT_EQ(::write(fd, text.data(), text.size()), 5000);
    ::close(fd);
  });
  std::string error = Error(path, 1000);
  writer.join();
  EXPECT_EQ(error, path + " is more than 1000 bytes; the limit for a test file is 1000 bytes");
}

TEST_F(FileText, reports_a_missing_file) {
  std::string path = (dir_ / "missing").string();
  EXPECT_EQ(Error(path, 100), path + ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace gpusched
