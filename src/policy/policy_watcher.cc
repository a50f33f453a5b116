#include "gpusched/policy/policy_watcher.h"

#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "gpusched/policy/policy_file.h"
#include "gpusched/util/file_text.h"

namespace gpusched {
namespace {

std::string ReadPolicyFile(const std::string& path) {
  return ReadFileText(path, kMaxPolicyBytes, "policy file", FileKinds::kRegularOnly);
}

// Device, inode, size and modification time of what the path names now (the link itself when it
// leads nowhere); empty when nothing is there. Tells the same fault left in place from a new one.
std::string FileIdentity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && ::lstat(path.c_str(), &st) != 0) return "";
  return fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
}

}  // namespace

struct PolicyWatcher::State {
  // What one check saw: the text, or why the file could not be read and which file was there.
  struct Observation {
    std::string text;
    std::string error;     // empty: `text` was read
    std::string identity;  // with an error: FileIdentity
    bool operator==(const Observation&) const = default;
  };

  State(std::string p, Published<Policy>& t, std::chrono::milliseconds i, Reader r)
      : path(std::move(p)),
        target(t),
        initial_digest(t.Get()->digest()),
        interval(i),
        read(r ? std::move(r) : Reader(ReadPolicyFile)) {}

  void Run();
  void Check();
  Observation Observe() const;
  void ReportUnreadable(const std::string& error);
  void Apply(std::shared_ptr<const Policy> policy, const std::vector<std::string>& errors);

  const std::string path;
  Published<Policy>& target;  // used only under mu while !stop: it may be gone after that
  const std::string initial_digest;
  const std::chrono::milliseconds interval;
  const Reader read;
  std::optional<Observation> last;  // the polling thread's own; none before the first check
  std::atomic<uint64_t> reloads{0};
  std::atomic<uint64_t> failures{0};
  std::mutex mu;
  std::condition_variable changed;  // stop or exited was set
  bool stop = false;                // guarded by mu
  bool exited = false;              // guarded by mu
};

PolicyWatcher::PolicyWatcher(std::string path, Published<Policy>& target,
                             std::chrono::milliseconds interval, Reader read)
    : state_(std::make_shared<State>(std::move(path), target, interval, std::move(read))) {
  // The thread holds the state too, so a thread left behind by the destructor still has it.
  thread_ = std::thread([state = state_] { state->Run(); });
}

PolicyWatcher::~PolicyWatcher() {
  std::unique_lock lock(state_->mu);
  state_->stop = true;
  state_->changed.notify_all();
  bool exited = state_->changed.wait_for(lock, kStopWait, [this] { return state_->exited; });
  lock.unlock();
  if (exited) {
    thread_.join();
    return;
  }
  // A read that does not return (a hung mount) must not hold up the process's exit.
  spdlog::warn("policy {}: a check is still reading the file; not waiting for it", state_->path);
  thread_.detach();
}

uint64_t PolicyWatcher::reloads() const { return state_->reloads.load(); }
uint64_t PolicyWatcher::failures() const { return state_->failures.load(); }

void PolicyWatcher::State::Run() {
  std::unique_lock lock(mu);
  while (!changed.wait_for(lock, interval, [this] { return stop; })) {
    lock.unlock();
    Check();
    lock.lock();
  }
  exited = true;
  changed.notify_all();
}

void PolicyWatcher::State::Check() {
  Observation seen = Observe();
  if (last && seen == *last) return;
  bool first = !last;
  last = std::move(seen);
  if (!last->error.empty()) {
    ReportUnreadable(last->error);
    return;
  }
  // The caller loaded the target from this file: the same text is no reload.
  if (first && PolicyDigest(last->text) == initial_digest) return;
  std::vector<std::string> errors;
  auto policy = CompilePolicy(last->text, path, errors);
  Apply(std::move(policy), errors);
}

PolicyWatcher::State::Observation PolicyWatcher::State::Observe() const {
  try {
    return {read(path), "", ""};
  } catch (const std::exception& e) {  // FileError; bad_alloc must not end the process either
    return {"", e.what(), FileIdentity(path)};
  }
}

// Logs before counting: whoever sees the count change finds the log line written.
void PolicyWatcher::State::ReportUnreadable(const std::string& error) {
  std::lock_guard lock(mu);
  if (stop) return;
  spdlog::error("policy reload failed: {}; keeping the last good policy ({})", error,
                target.Get()->digest());
  failures.fetch_add(1);
}

void PolicyWatcher::State::Apply(std::shared_ptr<const Policy> policy,
                                 const std::vector<std::string>& errors) {
  std::lock_guard lock(mu);
  if (stop) return;
  if (!policy) {
    for (const auto& e : errors) spdlog::error("policy reload rejected: {}", e);
    spdlog::error("policy {}: keeping the last good policy ({})", path, target.Get()->digest());
    failures.fetch_add(1);
    return;
  }
  spdlog::info("policy {} reloaded: digest {}, {} profiles", path, policy->digest(),
               policy->spec().profiles.size());
  target.Set(std::move(policy));
  reloads.fetch_add(1);
}

}  // namespace gpusched
