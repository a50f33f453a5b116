// ProgressBar: one stderr line showing the share of a long job done, redrawn at most every 200 ms
// (and at 100%). Thread-safe; a disabled bar draws nothing.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace gpusched {

class ProgressBar {
 public:
  // `what` follows the percentage, e.g. "of 20 runs".
  ProgressBar(std::string what, bool enabled) : what_(std::move(what)), enabled_(enabled) {}
  void Update(double share);
  // Ends the line.
  void Finish();

 private:
  const std::string what_;
  const bool enabled_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};  // guarded by mu_
};

}  // namespace gpusched
