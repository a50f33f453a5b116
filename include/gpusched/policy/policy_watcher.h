// PolicyWatcher: keeps a Published<Policy> in step with a policy file.
//
// It re-reads the file every `interval` and compares contents (util/file_change.h), so it follows
// edits in place, renames, and the symlink swap a mounted ConfigMap performs (..data ->
// ..2024_...). Only a regular file of at most kMaxPolicyBytes is read (util/file_text.h,
// FileKinds::kRegularOnly): nothing put at the path (a FIFO, /dev/zero, a 2 GB file) can make a
// check wait or fill memory.
//
// Every failed reload is logged and counted in failures(), once per change, and the last good
// policy stays in force:
// - a file that fails to parse or compile, with every error; a change is different contents;
// - a file that cannot be read (missing, a symlink loop, not a regular file, too large), in one
//   line naming the reason; a change is a different reason or a different file at the path
//   (device, inode, size or modification time), so a fault left in place is logged once.
// A recovery is logged as the reload it is. The first check compares the file with the target's
// digest, so the policy the caller loaded from the file is not reloaded.
//
// The destructor stops the polling thread and returns within kStopWait, even when a read hangs (a
// stuck network file system): the thread is then left to end by itself, and touches neither the
// target nor the logger once the destructor has returned. A signal's shutdown never waits on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gpusched/policy/policy.h"
#include "gpusched/util/periodic.h"
#include "gpusched/util/published.h"

namespace gpusched {

class PolicyWatcher {
 public:
  // The text of the file at a path; throws FileError when it cannot be read.
  using Reader = std::function<std::string(const std::string& path)>;
  static constexpr std::chrono::milliseconds kStopWait{1000};

  // Starts watching; `target` must already hold a policy and outlive the watcher. `read` replaces
  // the file read (tests: one that hangs); empty: ReadFileText with the limits above.
  PolicyWatcher(std::string path, Published<Policy>& target, std::chrono::milliseconds interval,
                Reader read = {});
  ~PolicyWatcher();
  PolicyWatcher(const PolicyWatcher&) = delete;
  PolicyWatcher& operator=(const PolicyWatcher&) = delete;

  uint64_t reloads() const;
  uint64_t failures() const;

 private:
  struct State;  // shared with the polling thread, which may outlive the watcher

  std::shared_ptr<State> state_;
  PeriodicThread polling_;
};

}  // namespace gpusched
