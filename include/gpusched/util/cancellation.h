// Cancellation: a flag one thread raises and a long computation (a planning report over a large
// cluster) reads between units of work, so a shutdown or a signal need not wait for it to finish.
// Raising it is final. Thread-safe; a computation given no Cancellation (nullptr) runs to its end.
#pragma once

#include <atomic>

namespace gpusched {

class Cancellation {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// Whether `cancellation` (null: none) was raised.
inline bool Cancelled(const Cancellation* cancellation) {
  return cancellation != nullptr && cancellation->cancelled();
}

}  // namespace gpusched
