#include "gpusched/kube/line_splitter.h"

#include <algorithm>

namespace gpusched {

void LineSplitter::Hold(std::string_view part) {
  if (dropping_) return;
  if (pending_.size() + part.size() > max_line_bytes_) {
    dropping_ = true;
    ++oversized_;
    pending_.clear();
    return;
  }
  pending_.append(part);
  peak_ = std::max(peak_, pending_.size());
}

bool LineSplitter::Feed(std::string_view bytes,
                        const std::function<bool(std::string_view)>& on_line) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      Hold(bytes);
      return true;
    }
    std::string_view part = bytes.substr(0, nl);
    bytes.remove_prefix(nl + 1);
    if (pending_.empty() && !dropping_) {
      // The whole line lies in this chunk: handed over in place.
      if (part.size() > max_line_bytes_) {
        ++oversized_;
        continue;
      }
      if (!part.empty() && !on_line(part)) return false;
      continue;
    }
    Hold(part);
    bool go_on = dropping_ || pending_.empty() || on_line(pending_);
    dropping_ = false;
    pending_.clear();  // keeps its capacity, at most one line's
    if (!go_on) return false;
  }
  return true;
}

}  // namespace gpusched
