#include "gpusched/kube/refusal_counts.h"

#include <utility>

#include <spdlog/spdlog.h>

namespace gpusched {

RefusalCounts::RefusalCounts(std::string what, std::initializer_list<const char*> declared)
    : what_(std::move(what)) {
  for (const char* reason : declared) counts_.emplace(reason, 0);
}

void RefusalCounts::Add(const char* reason, std::string_view object, std::string_view why,
                        uint64_t n) {
  uint64_t before = 0;
  {
    std::lock_guard lock(mu_);
    uint64_t& count = counts_[reason];
    before = count;
    count += n;
  }
  if (before == 0) {
    spdlog::warn("{}: refused {} ({}; later refusals for it are logged at debug level): {}", what_,
                 object, reason, why);
  } else {
    spdlog::debug("{}: refused {} ({}, {} so far): {}", what_, object, reason, before + n, why);
  }
}

std::map<std::string_view, uint64_t> RefusalCounts::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace gpusched
