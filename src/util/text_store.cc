#include "gpusched/util/text_store.h"

#include <algorithm>
#include <cstring>

namespace gpusched {

std::string_view TextStore::Keep(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > free_size_) {
    size_t size = std::max(next_block_, text.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    free_ = blocks_.back().get();
    free_size_ = size;
    next_block_ = size * 2;
  }
  char* at = free_;
  std::memcpy(at, text.data(), text.size());
  free_ += text.size();
  free_size_ -= text.size();
  return {at, text.size()};
}

}  // namespace gpusched
