#include "gpusched/policy/policy_watcher.h"

#include <spdlog/spdlog.h>

#include "gpusched/policy/policy_file.h"
#include "gpusched/util/file_text.h"

namespace gpusched {
namespace {

// The policy text, or false when the file cannot be read (see ReadPolicyText).
bool ReadWhole(const std::string& path, std::string& out) {
  try {
    out = ReadPolicyText(path);
    return true;
  } catch (const FileError&) {
    return false;
  }
}

}  // namespace

PolicyWatcher::PolicyWatcher(std::string path, Published<Policy>& target,
                             std::chrono::milliseconds interval)
    : path_(std::move(path)), target_(target), interval_(interval) {
  ReadWhole(path_, last_text_);
  thread_ = std::thread([this] { Run(); });
}

PolicyWatcher::~PolicyWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PolicyWatcher::Run() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    CheckOnce();
    lock.lock();
  }
}

void PolicyWatcher::CheckOnce() {
  std::string text;
  if (!ReadWhole(path_, text) || text == last_text_) return;  // a missing file mid-swap: wait
  last_text_ = text;
  std::vector<std::string> errors;
  auto policy = CompilePolicy(text, path_, errors);
  if (!policy) {
    failures_.fetch_add(1);
    for (const auto& e : errors) spdlog::error("policy reload rejected: {}", e);
    spdlog::error("policy {}: keeping the last good policy ({})", path_, target_.Get()->digest());
    return;
  }
  spdlog::info("policy {} reloaded: digest {}, {} profiles", path_, policy->digest(),
               policy->spec().profiles.size());
  target_.Set(std::move(policy));
  reloads_.fetch_add(1);
}

}  // namespace gpusched
