#include "gpusched/util/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpusched {
namespace {

// Closes the descriptor on every path out of ReadFileText.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void ThrowErrno(const std::string& path, const char* doing) {
  throw FileError(path + ": cannot " + doing + ": " + std::strerror(errno));
}

[[noreturn]] void ThrowTooLarge(const std::string& path, const std::string& size, size_t max_bytes,
                                const std::string& what) {
  throw FileError(path + " is " + size + " bytes; the limit for a " + what + " is " +
                  std::to_string(max_bytes) + " bytes");
}

}  // namespace

std::string ReadFileText(const std::string& path, size_t max_bytes, const std::string& what) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) ThrowErrno(path, "open");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) ThrowErrno(path, "stat");
  // open(2) succeeds on a directory read-only; read(2) would then fail with EISDIR.
  if (S_ISDIR(st.st_mode)) throw FileError(path + " is a directory");
  bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<uint64_t>(st.st_size) > max_bytes) {
    ThrowTooLarge(path, std::to_string(st.st_size), max_bytes, what);
  }
  std::string text;
  if (regular) text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowErrno(path, "read");
    if (n == 0) return text;
    // A pipe has no size to check up front, and a regular file may grow while it is read.
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ThrowTooLarge(path, "more than " + std::to_string(max_bytes), max_bytes, what);
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace gpusched
