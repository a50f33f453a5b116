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

namespace {

std::string Joined(const Problems& problems) {
  std::string out;
  for (const std::string& line : problems.lines()) out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace

InputError::InputError(const Problems& problems)
    : std::runtime_error(Joined(problems)), lines_(problems.lines()) {}

std::vector<std::string> InputError::lines() const {
  if (!lines_.empty()) return lines_;
  return {what()};
}

std::string InContext(std::string_view context, const InputError& inner) {
  return std::string(context) + ": " + inner.what();
}

void ThrowIfAny(const Problems& problems) {
  if (!problems.empty()) throw InputError(problems);
}

}  // namespace gpusched
