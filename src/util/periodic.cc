#include "gpusched/util/periodic.h"

#include <condition_variable>
#include <mutex>

namespace gpusched {

struct PeriodicThread::Control {
  Control(std::chrono::milliseconds p, std::function<void()> t) : period(p), task(std::move(t)) {}

  void Run() {
    std::unique_lock lock(mu);
    for (;;) {
      changed.wait_for(lock, period, [this] { return stop || woken; });
      if (stop) break;
      woken = false;
      lock.unlock();
      task();
      lock.lock();
    }
    exited = true;
    changed.notify_all();
  }

  const std::chrono::milliseconds period;
  const std::function<void()> task;
  std::mutex mu;
  std::condition_variable changed;  // stop, woken or exited was set
  bool stop = false;                // guarded by mu
  bool woken = false;               // guarded by mu
  bool exited = false;              // guarded by mu
};

PeriodicThread::PeriodicThread(std::chrono::milliseconds period, std::function<void()> task)
    : control_(std::make_shared<Control>(period, std::move(task))),
      thread_([control = control_] { control->Run(); }) {}

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Wake() {
  {
    std::lock_guard lock(control_->mu);
    control_->woken = true;
  }
  control_->changed.notify_all();
}

void PeriodicThread::Stop() {
  {
    std::lock_guard lock(control_->mu);
    control_->stop = true;
  }
  control_->changed.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PeriodicThread::StopWithin(std::chrono::milliseconds limit) {
  std::unique_lock lock(control_->mu);
  control_->stop = true;
  control_->changed.notify_all();
  bool exited = control_->changed.wait_for(lock, limit, [this] { return control_->exited; });
  lock.unlock();
  if (!thread_.joinable()) return exited;
  if (exited) {
    thread_.join();
  } else {
    thread_.detach();
  }
  return exited;
}

}  // namespace gpusched
