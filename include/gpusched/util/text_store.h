// TextStore: owns copies of short strings so that many string_views can point at them, without
// one allocation per string: text is copied into large blocks that never move.
//
// Decoded wire values keep their strings here. Not synchronized; const access is thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace gpusched {

class TextStore {
 public:
  // `expected_bytes`: a hint for the first block, e.g. the size of the document being decoded.
  explicit TextStore(size_t expected_bytes = 0)
      : next_block_(std::max(expected_bytes, kMinBlock)) {}
  TextStore(const TextStore&) = delete;
  TextStore& operator=(const TextStore&) = delete;

  // A copy of `text` that lives as long as the store.
  std::string_view Keep(std::string_view text);

 private:
  static constexpr size_t kMinBlock = 4096;

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;  // unused part of the last block
  size_t free_size_ = 0;
  size_t next_block_;
};

}  // namespace gpusched
