// SignalShutdown: SIGINT and SIGTERM of a serving process, taken by one thread from the moment it
// is constructed, so a signal is honoured during startup too (loading a large inventory can take
// a while).
//
// Until Serving() is called a signal ends the process at once, with exit code 128 + the signal:
// nothing serves yet and nothing needs flushing. After it a signal calls the stop function, and
// if the process has not called Finish() within `grace` (a safeguard: the servers return once
// their threads finish the requests in hand), ends it with exit code 0.
//
// Construct it before starting any other thread: it blocks the signals in the calling thread,
// and threads started later inherit that mask.
#pragma once

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace gpusched {

class SignalShutdown {
 public:
  explicit SignalShutdown(std::chrono::milliseconds grace);
  ~SignalShutdown();  // Finish()
  SignalShutdown(const SignalShutdown&) = delete;
  SignalShutdown& operator=(const SignalShutdown&) = delete;

  // From now on a signal calls `stop` (once, on the signal thread) instead of ending the process.
  void Serving(std::function<void()> stop);
  // The process is finishing by itself: the signal thread ends, later signals stay blocked.
  void Finish();

 private:
  void Wait();

  const std::chrono::milliseconds grace_;
  sigset_t signals_;
  std::mutex mu_;
  std::condition_variable finished_cv_;
  std::function<void()> stop_;  // guarded by mu_
  bool finished_ = false;       // guarded by mu_
  std::thread waiter_;
};

}  // namespace gpusched
