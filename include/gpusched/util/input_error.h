// InputError: what is wrong with a piece of outside input (a file, a flag, a request), in the one
// style every edge of gpusched reports it:
//
//   SOURCE:LINE:COLUMN: KEY: PROBLEM
//
// as compilers do, so editors and grep find the place. LINE and COLUMN count from 1 and are left
// out when unknown (0); KEY, the path of the offending key ("plugins.fgd.weight", a CSV column), is
// left out when empty. A problem with a file as a whole may read as a sentence that starts with the
// source ("PATH is a directory", gpusched/util/file_text.h). The caller quotes bytes taken from the
// input (gpusched/util/quote.h), so a message stays one printable line. The edges wrap it the same
// way everywhere: the command line prints "gpusched: <error>" to stderr
// (gpusched/app/command_line.h), the HTTP listener answers 400 with {"error": "<error>"}, the
// policy watcher logs it and keeps the last good policy.
#ifndef GPUSCHED_UTIL_INPUT_ERROR_H_
#define GPUSCHED_UTIL_INPUT_ERROR_H_

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpusched {

// SOURCE[:LINE[:COLUMN]]: [KEY: ]PROBLEM.
std::string FormatInputError(std::string_view source, int line, int column, std::string_view key,
                             std::string_view problem);

// The exception every reader of outside input throws (or derives its own from), so a front door
// catches one type.
class InputError : public std::runtime_error {
 public:
  // `message` already in the style above.
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  InputError(std::string_view source, int line, int column, std::string_view key,
             std::string_view problem)
      : std::runtime_error(FormatInputError(source, line, column, key, problem)) {}
};

}  // namespace gpusched

#endif  // GPUSCHED_UTIL_INPUT_ERROR_H_
