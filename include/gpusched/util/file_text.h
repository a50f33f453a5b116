// Reading a whole input file (inventory, policy, scenario, kubeconfig, pod, certificate) with a
// size cap, so a wrong path fails at once with a clear message instead of a confusing parse error
// or gigabytes of memory.
//
// A directory is refused. A regular file larger than the cap is refused before anything is read.
// Other files (a pipe, as in --cluster <(kubectl get ...), or a device) are read until the cap is
// passed. Errors throw FileError with one line naming the path. Thread-safe.
#ifndef GPUSCHED_UTIL_FILE_TEXT_H_
#define GPUSCHED_UTIL_FILE_TEXT_H_

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpusched {

class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The contents of `path`, at most `max_bytes`. `what` names the kind of file for the size error
// ("<path> is N bytes; the limit for a <what> is M bytes").
std::string ReadFileText(const std::string& path, size_t max_bytes, const std::string& what);

}  // namespace gpusched

#endif  // GPUSCHED_UTIL_FILE_TEXT_H_
