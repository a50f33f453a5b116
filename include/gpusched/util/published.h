// Published<T>: one writer swaps in a new immutable T; any number of readers take a reference
// that stays valid for as long as they hold it.
//
// The writer builds the new value before Set(); the lock guards only the pointer copy (one
// reference-count increment), so a reader never waits on a writer's work and never sees a
// half-built value. (std::atomic<std::shared_ptr> would do the same, but libstdc++ 12's version is
// opaque to ThreadSanitizer, and a lock this short costs nothing measurable.)
// Safe for concurrent access from multiple threads without external synchronization.
#pragma once

#include <memory>
#include <mutex>

namespace gpusched {

template <class T>
class Published {
 public:
  Published() = default;
  explicit Published(std::shared_ptr<const T> initial) : value_(std::move(initial)) {}
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;

  // The current value; nullptr until the first Set.
  std::shared_ptr<const T> Get() const {
    std::lock_guard lock(mu_);
    return value_;
  }
  void Set(std::shared_ptr<const T> value) {
    std::lock_guard lock(mu_);
    value_.swap(value);
    // The previous value, if this was its last reference, is destroyed after the lock is released.
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const T> value_;
};

}  // namespace gpusched
