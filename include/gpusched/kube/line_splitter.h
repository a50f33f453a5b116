// LineSplitter: cuts a byte stream (a watch response) into lines without ever holding more than
// one bounded line.
//
// A line is handed over as soon as its newline arrives; a line that lies whole within one chunk
// is handed over in place, without a copy. A line longer than `max_line_bytes` is never buffered:
// its bytes are dropped as they arrive up to its newline, and it is counted (oversized()), so a
// 128 MiB event costs neither 128 MiB nor a rescan of what came before. Empty lines are ignored.
// Not synchronized: one stream, one splitter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gpusched {

class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Hands every line `bytes` completes to `on_line`; returns false as soon as `on_line` does.
  bool Feed(std::string_view bytes, const std::function<bool(std::string_view line)>& on_line);

  // Lines dropped for their length so far.
  uint64_t oversized() const { return oversized_; }
  // The most bytes the splitter held at once for an incomplete line.
  size_t peak_buffer_bytes() const { return peak_; }

 private:
  // Keeps `part` of an incomplete line, or starts dropping the line once it is too long.
  void Hold(std::string_view part);

  size_t max_line_bytes_;
  std::string pending_;
  bool dropping_ = false;
  uint64_t oversized_ = 0;
  size_t peak_ = 0;
};

}  // namespace gpusched
