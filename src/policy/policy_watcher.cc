#include "gpusched/policy/policy_watcher.h"

#include <atomic>
#include <mutex>

#include <spdlog/spdlog.h>

#include "gpusched/policy/policy_file.h"
#include "gpusched/util/file_change.h"
#include "gpusched/util/file_text.h"

namespace gpusched {
namespace {

std::string ReadPolicyFile(const std::string& path) {
  return ReadFileText(path, kMaxPolicyBytes, "policy file", FileKinds::kRegularOnly);
}

}  // namespace

struct PolicyWatcher::State {
  State(std::string path, Published<Policy>& t, Reader read)
      : file(std::move(path), read ? std::move(read) : Reader(ReadPolicyFile)),
        target(t),
        initial_digest(t.Get()->digest()) {}

  void Check();
  void ReportUnreadable(const Problems& problems);
  void Apply(Validated<std::shared_ptr<const Policy>> policy);

  FileChange file;            // looked at by the polling thread only
  Published<Policy>& target;  // used only under mu while !stop: it may be gone after that
  const std::string initial_digest;
  std::atomic<uint64_t> reloads{0};
  std::atomic<uint64_t> failures{0};
  std::mutex mu;
  bool stop = false;  // guarded by mu: the watcher is gone
};

PolicyWatcher::PolicyWatcher(std::string path, Published<Policy>& target,
                             std::chrono::milliseconds interval, Reader read)
    : state_(std::make_shared<State>(std::move(path), target, std::move(read))),
      // The task holds the state too, so a thread left behind by the destructor still has it.
      polling_(interval, [state = state_] { state->Check(); }) {}

PolicyWatcher::~PolicyWatcher() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  if (polling_.StopWithin(kStopWait)) return;
  // A read that does not return (a hung mount) must not hold up the process's exit.
  spdlog::warn("policy {}: a check is still reading the file; not waiting for it",
               state_->file.path());
}

uint64_t PolicyWatcher::reloads() const { return state_->reloads.load(); }
uint64_t PolicyWatcher::failures() const { return state_->failures.load(); }

void PolicyWatcher::State::Check() {
  bool first = file.last() == nullptr;
  const FileChange::Look* seen = file.Check();
  if (!seen) return;
  if (!seen->read()) {
    ReportUnreadable(seen->problems);
    return;
  }
  // The caller loaded the target from this file: the same text is no reload.
  if (first && PolicyDigest(seen->text) == initial_digest) return;
  Apply(CompilePolicy(seen->text, file.path()));
}

// Logs before counting: whoever sees the count change finds the log line written.
void PolicyWatcher::State::ReportUnreadable(const Problems& problems) {
  std::lock_guard lock(mu);
  if (stop) return;
  for (const std::string& line : problems.lines()) {
    spdlog::error("policy reload failed: {}; keeping the last good policy ({})", line,
                  target.Get()->digest());
  }
  failures.fetch_add(1);
}

void PolicyWatcher::State::Apply(Validated<std::shared_ptr<const Policy>> policy) {
  std::lock_guard lock(mu);
  if (stop) return;
  if (!policy.ok()) {
    for (const auto& e : policy.problems.lines()) spdlog::error("policy reload rejected: {}", e);
    spdlog::error("policy {}: keeping the last good policy ({})", file.path(),
                  target.Get()->digest());
    failures.fetch_add(1);
    return;
  }
  spdlog::info("policy {} reloaded: digest {}, {} profiles", file.path(), policy.value->digest(),
               policy.value->spec().profiles.size());
  target.Set(std::move(policy.value));
  reloads.fetch_add(1);
}

}  // namespace gpusched
