#include "gpusched/util/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

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

// strerror's text as the end of a sentence: "too many levels of symbolic links".
std::string Reason(int error) {
  std::string text = std::strerror(error);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

[[noreturn]] void ThrowErrno(const std::string& path, const char* doing, int error) {
  throw FileError(path + ": cannot " + doing + ": " + Reason(error));
}

// ENOENT gets its own words: it is the likeliest mistake, and a dangling link (a ConfigMap key
// that is gone) is worth telling apart from a wrong path.
[[noreturn]] void ThrowCannotOpen(const std::string& path, int error) {
  if (error != ENOENT) ThrowErrno(path, "open", error);
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    throw FileError(path + " is a symbolic link to a file that does not exist");
  }
  throw FileError(path + " does not exist");
}

[[noreturn]] void ThrowTooLarge(const std::string& path, const std::string& size, size_t max_bytes,
                                const std::string& what) {
  throw FileError(path + " is " + size + " bytes; the limit for a " + what + " is " +
                  std::to_string(max_bytes) + " bytes");
}

const char* KindName(mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISSOCK(mode)) return "socket";
  return "unknown kind";
}

// /dev/stdin, /dev/fd/N or /proc/self/fd/N: a descriptor the process was handed, as a shell's
// process substitution names it. A FIFO anywhere else was put there, by mistake or not.
bool NamesAHandedDescriptor(std::string_view path) {
  if (path == "/dev/stdin") return true;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    std::string_view number = path.substr(prefix.size());
    return !number.empty() && number.find_first_not_of("0123456789") == std::string_view::npos;
  }
  return false;
}

// Throws unless `mode` is a kind of file ReadFileText reads; true for a handed pipe.
bool CheckKind(const std::string& path, mode_t mode, FileKinds kinds) {
  if (S_ISREG(mode)) return false;
  if (S_ISDIR(mode)) throw FileError(path + " is a directory");
  if (S_ISFIFO(mode) && kinds == FileKinds::kRegularOrHandedPipe && NamesAHandedDescriptor(path)) {
    return true;
  }
  throw FileError(path + " is not a regular file (" + KindName(mode) + ")");
}

// Reads to the end, at most max_bytes + 1 bytes: one byte past the cap proves the file too large
// without reading the rest of it.
std::string ReadCapped(int fd, const std::string& path, size_t max_bytes, const std::string& what,
                       size_t expected) {
  std::string text;
  text.reserve(expected);
  char buf[1 << 16];
  for (;;) {
    size_t room = max_bytes - text.size();  // text.size() <= max_bytes here
    size_t want = room < sizeof buf ? room + 1 : sizeof buf;
    ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowErrno(path, "read", errno);
    if (n == 0) return text;
    // A pipe has no size to check up front, and a regular file may grow while it is read.
    if (static_cast<size_t>(n) > room) {
      ThrowTooLarge(path, "more than " + std::to_string(max_bytes), max_bytes, what);
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::string ReadFileText(const std::string& path, size_t max_bytes, const std::string& what,
                         FileKinds kinds) {
  // Refuse by the path's kind first, so a device is not even opened (opening some has effects);
  // the check on the descriptor below is the one that counts, the path may change in between.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) ThrowCannotOpen(path, errno);
  CheckKind(path, st.st_mode, kinds);
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, possibly forever.
  int raw = -1;
  do {
    raw = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) ThrowCannotOpen(path, errno);
  Fd fd(raw);
  if (::fstat(fd.get(), &st) != 0) ThrowErrno(path, "stat", errno);
  bool handed_pipe = CheckKind(path, st.st_mode, kinds);
  if (handed_pipe) {
    // The user's own writer feeds it: wait for its data as any reader of a pipe does.
    int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      ThrowErrno(path, "read", errno);
    }
    return ReadCapped(fd.get(), path, max_bytes, what, 0);
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ThrowTooLarge(path, std::to_string(st.st_size), max_bytes, what);
  }
  return ReadCapped(fd.get(), path, max_bytes, what, static_cast<size_t>(st.st_size));
}

}  // namespace gpusched
