#include "gpusched/cli/progress_bar.h"

#include <algorithm>
#include <cstdio>

namespace gpusched {

void ProgressBar::Update(double share) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200) && share < 1) return;
  last_ = now;
  share = std::clamp(share, 0.0, 1.0);
  int filled = static_cast<int>(share * 30);
  std::fprintf(stderr, "\r[%s%s] %3.0f%% %s", std::string(filled, '#').c_str(),
               std::string(30 - filled, ' ').c_str(), share * 100, what_.c_str());
}

void ProgressBar::Finish() {
  if (enabled_) std::fprintf(stderr, "\n");
}

}  // namespace gpusched
