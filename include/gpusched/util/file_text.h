// Reading a whole input file (inventory, policy, scenario, kubeconfig, pod, certificate) with a
// size cap, so a wrong path fails at once with a clear message instead of a confusing parse error,
// gigabytes of memory or a read that never returns.
//
// The file is opened without waiting (O_NONBLOCK: a FIFO with no writer does not block the open)
// and checked on the open descriptor before anything is read, so a swap of the path in between
// changes nothing. Symbolic links are followed (a mounted ConfigMap's ..data swap needs that).
// - A regular file is read when it is at most the cap; at most cap + 1 bytes are read, so one
//   that grows past the cap while it is read is refused too.
// - A directory, a FIFO, a device (/dev/zero) or a socket is refused ("<path> is not a regular
//   file (FIFO)"); a device is not even opened, as opening some has effects.
// - The one exception, unless kRegularOnly: a pipe named as a descriptor gpusched was handed
//   (/dev/fd/N, /proc/self/fd/N, /dev/stdin), as in --cluster <(kubectl get ...). It is read to
//   its end, up to the cap; that read waits on the writer, which the user started.
// Errors throw FileError with one line naming the path and the reason. Thread-safe.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpusched/util/input_error.h"

namespace gpusched {

class FileError : public InputError {
 public:
  using InputError::InputError;
};

enum class FileKinds {
  kRegularOrHandedPipe,  // the default: a file named on a command line may be a <(...)
  kRegularOnly,          // a file re-read on a timer, where a wait would stall the re-reads
};

// The contents of `path`, at most `max_bytes`. `what` names the kind of file for the size error
// ("<path> is N bytes; the limit for a <what> is M bytes").
std::string ReadFileText(const std::string& path, size_t max_bytes, const std::string& what,
                         FileKinds kinds = FileKinds::kRegularOrHandedPipe);

}  // namespace gpusched
