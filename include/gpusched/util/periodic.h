// PeriodicThread: one thread that runs a task every period until it is stopped: the one way
// gpusched runs work on a timer in the background (the policy and TLS re-reads, the live
// inventory's publisher, the reports worker's look at the snapshot).
//
// The task first runs one period after the start, then one period after each run ends, so a slow
// run delays the next and never overlaps it. Wake() asks for a run now instead of at the period's
// end (a wake during a run is one more run right after it, however many arrive). Stopping lets a
// run under way finish and starts no other. Stop() waits for the thread; StopWithin(limit) waits
// at most `limit` and otherwise leaves the thread to end by itself, for a task that may hang (a
// read on a stuck network file system) where the process's exit must not wait on it: the thread
// keeps its own copy of the task, so whatever the task holds stays alive until it returns.
// Wake and Stop may be called from any thread, but not from the task itself.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace gpusched {

class PeriodicThread {
 public:
  // Starts the thread.
  PeriodicThread(std::chrono::milliseconds period, std::function<void()> task);
  // Stop().
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Runs the task as soon as the thread is free, then again one period later.
  void Wake();
  // Ends the runs and waits for the thread. Idempotent.
  void Stop();
  // Ends the runs; true when the thread ended within `limit`, false when it is left running to
  // end by itself (a run under way did not return).
  bool StopWithin(std::chrono::milliseconds limit);

 private:
  struct Control;  // shared with the thread, which may outlive this object

  std::shared_ptr<Control> control_;
  std::thread thread_;
};

}  // namespace gpusched
