// PolicyWatcher: keeps a Published<Policy> in step with a policy file.
//
// It re-reads the file every `interval` and compares contents, so it follows edits in place,
// renames, and the symlink swap a mounted ConfigMap performs (..data -> ..2024_...). A file that
// fails to parse or compile is logged with every error and the last good policy stays in force;
// the same bad contents are reported once. The polling thread stops in the destructor.
#ifndef GPUSCHED_POLICY_POLICY_WATCHER_H_
#define GPUSCHED_POLICY_POLICY_WATCHER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/policy/policy.h"
#include "gpusched/util/published.h"

namespace gpusched {

class PolicyWatcher {
 public:
  // Starts watching; `target` must already hold a policy and outlive the watcher.
  PolicyWatcher(std::string path, Published<Policy>& target, std::chrono::milliseconds interval);
  ~PolicyWatcher();
  PolicyWatcher(const PolicyWatcher&) = delete;
  PolicyWatcher& operator=(const PolicyWatcher&) = delete;

  uint64_t reloads() const { return reloads_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  void Run();
  void CheckOnce();

  std::string path_;
  Published<Policy>& target_;
  std::chrono::milliseconds interval_;
  std::string last_text_;  // contents last seen, good or bad
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> failures_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_POLICY_POLICY_WATCHER_H_
