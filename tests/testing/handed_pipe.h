// HandedPipe: a pipe as gpusched is handed one by `--cluster <(kubectl get ...)`: the reader is a
// descriptor named /dev/fd/N. Both ends are close-on-exec and above 10, so a test may dup2 the
// reader onto a child's fd 3 (dup2 onto itself would keep close-on-exec).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace gpusched::testing {

class HandedPipe {
 public:
  HandedPipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    for (int i : {0, 1}) {
      fds_[i] = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
      ::close(fds[i]);
    }
  }
  ~HandedPipe() {
    CloseWriter();
    ::close(fds_[0]);
  }
  HandedPipe(const HandedPipe&) = delete;
  HandedPipe& operator=(const HandedPipe&) = delete;

  int reader() const { return fds_[0]; }
  // The reader by the name a process gives it.
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }
  // What /proc/PID/fd shows for a descriptor of this pipe: "pipe:[inode]".
  std::filesystem::path link() const {
    return std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fds_[0]));
  }
  void Write(const std::string& text) {  // under the pipe's 64 KiB, it never waits for a reader
    EXPECT_EQ(::write(fds_[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void CloseWriter() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace gpusched::testing
