#include "gpusched/cli/signal_shutdown.h"

#include <pthread.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace gpusched {

SignalShutdown::SignalShutdown(std::chrono::milliseconds grace) : grace_(grace) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  waiter_ = std::thread([this] { Wait(); });
}

SignalShutdown::~SignalShutdown() { Finish(); }

void SignalShutdown::Serving(std::function<void()> stop) {
  std::lock_guard lock(mu_);
  stop_ = std::move(stop);
}

void SignalShutdown::Finish() {
  if (!waiter_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    finished_ = true;
  }
  finished_cv_.notify_all();
  // Wakes the waiter if it still sits in sigwait; it sees finished_ and returns.
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

void SignalShutdown::Wait() {
  int signal = 0;
  sigwait(&signals_, &signal);
  std::unique_lock lock(mu_);
  if (finished_) return;
  if (!stop_) {
    spdlog::info("received signal {} while starting, exiting", signal);
    spdlog::shutdown();
    std::_Exit(128 + signal);
  }
  spdlog::info("received signal {}, shutting down", signal);
  stop_();
  if (!finished_cv_.wait_for(lock, grace_, [this] { return finished_; })) {
    spdlog::info("closing idle connections and exiting");
    spdlog::shutdown();
    std::_Exit(0);
  }
}

}  // namespace gpusched
