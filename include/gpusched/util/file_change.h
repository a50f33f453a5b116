// FileChange: what a file held when it was last looked at, to tell when that changes: the one way
// gpusched notices a change in a file it re-reads (the policy file, the TLS certificate, key and
// client CA, a service-account token).
//
// Every look reads the file whole and compares what it saw with the previous look: the text, or
// why the file could not be read and which file was at the path (FileIdentity). Contents decide,
// not timestamps: an edit in place, a rename over the path and the symlink swap of a mounted
// ConfigMap or Secret (..data -> ..2024_...) are all seen, and so are two writes of the same size
// within one tick of the file system's clock, which a modification time can miss. An unreadable
// file's identity tells a fault left in place (one change) from a new one; a file readable again
// after a fault is a change even with its old text (a recovery). Not thread-safe: one owner
// looks, usually from a PeriodicThread (util/periodic.h).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "gpusched/util/validated.h"

namespace gpusched {

class FileChange {
 public:
  // The text of the file at a path; throws (FileError: util/file_text.h) when it cannot be read.
  using Reader = std::function<std::string(const std::string& path)>;

  // What one look saw.
  struct Look {
    std::string text;      // what was read
    Problems problems;     // why nothing could be read, one line; none when `text` was read
    std::string identity;  // with a problem: FileIdentity of the path
    bool read() const { return problems.empty(); }
    bool operator==(const Look& o) const {
      return text == o.text && problems.lines() == o.problems.lines() && identity == o.identity;
    }
  };

  FileChange(std::string path, Reader read);

  // Reads the file: what it saw when that differs from the previous look (the first look always
  // differs), nullptr when nothing changed. Valid until the next look.
  const Look* Check();
  // What the last look saw, changed or not; nullptr before the first.
  const Look* last() const { return last_ ? &*last_ : nullptr; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Reader read_;
  std::optional<Look> last_;
};

// Device, inode, size and modification time of what `path` names now (the link itself when it
// leads nowhere); empty when nothing is there.
std::string FileIdentity(const std::string& path);

}  // namespace gpusched
