#include "gpusched/util/input_error.h"

namespace gpusched {

std::string FormatInputError(std::string_view source, int line, int column, std::string_view key,
                             std::string_view problem) {
  std::string out(source);
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) out.append(key).append(": ");
  out.append(problem);
  return out;
}

}  // namespace gpusched
