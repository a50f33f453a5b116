#include "gpusched/util/file_text.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "testing/handed_pipe.h"

namespace gpusched::file_text_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

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

using testing::HandedPipe;

TEST_F(FileText, reads_a_handed_pipe_to_its_end) {
  HandedPipe pipe;
  pipe.Write("kind: List\n");  // less than the pipe's 64 KiB buffer: no reader needed yet
  pipe.CloseWriter();
  EXPECT_EQ(ReadFileText(pipe.path(), 100, "test file"), "kind: List\n");
}

TEST_F(FileText, reads_a_handed_pipe_only_up_to_the_cap) {
  HandedPipe pipe;
  pipe.Write(std::string(5000, 'x'));
  EXPECT_EQ(Error(pipe.path(), 1000),
            pipe.path() + " is more than 1000 bytes; the limit for a test file is 1000 bytes");
}

TEST_F(FileText, regular_only_refuses_even_a_handed_pipe) {
  HandedPipe pipe;
  pipe.Write("x");
  try {
    ReadFileText(pipe.path(), 100, "test file", FileKinds::kRegularOnly);
    ADD_FAILURE() << "read";
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()), pipe.path() + " is not a regular file (FIFO)");
  }
}

// Opens `fifo` for writing once `limit` passes without Done(): a reader stuck in open(2) (the
// code before this test) is released, so the test fails instead of hanging.
class FifoRescue {
 public:
  FifoRescue(std::string fifo, std::chrono::milliseconds limit)
      : thread_([this, fifo = std::move(fifo), limit] {
          std::unique_lock lock(mu_);
          if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
          int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
          if (fd >= 0) ::close(fd);
        }) {}
  ~FifoRescue() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

TEST_F(FileText, refuses_a_named_fifo_without_waiting_for_a_writer) {
  std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  FifoRescue rescue(path, 3s);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Error(path, 100), path + " is not a regular file (FIFO)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(FileText, refuses_a_device_before_reading_it) {
  EXPECT_EQ(Error("/dev/zero", 100), "/dev/zero is not a regular file (character device)");
}

TEST_F(FileText, refuses_a_socket) {
  std::string path = (dir_ / "socket").string();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(Error(path, 100), path + " is not a regular file (socket)");
  ::close(fd);
}

TEST_F(FileText, refuses_a_2_gib_file_by_its_size_without_reading_it) {
  std::string path = (dir_ / "sparse").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{1} << 31), 0);  // sparse: no disk, no time
  ::close(fd);
  EXPECT_EQ(Error(path, 1 << 20),
            path + " is 2147483648 bytes; the limit for a test file is 1048576 bytes");
}

TEST_F(FileText, follows_symlinks_and_names_a_loop) {
  std::string target = Write("target", "text");
  fs::create_symlink(target, dir_ / "link");
  EXPECT_EQ(ReadFileText((dir_ / "link").string(), 100, "test file"), "text");
  fs::create_symlink("loop-b", dir_ / "loop-a");
  fs::create_symlink("loop-a", dir_ / "loop-b");
  std::string loop = (dir_ / "loop-a").string();
  EXPECT_EQ(Error(loop, 100), loop + ": cannot open: too many levels of symbolic links");
}

TEST_F(FileText, reports_a_missing_file_and_a_dangling_link) {
  std::string path = (dir_ / "missing").string();
  EXPECT_EQ(Error(path, 100), path + " does not exist");
  std::string link = (dir_ / "dangling").string();
  fs::create_symlink(dir_ / "missing", link);
  EXPECT_EQ(Error(link, 100), link + " is a symbolic link to a file that does not exist");
}

}  // namespace
}  // namespace gpusched::file_text_test
