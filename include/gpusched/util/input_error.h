// InputError: what is wrong with a piece of outside input (a file, a flag, an address a flag names,
// a request), in the one style every edge of gpusched reports it:
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
//
// This is gpusched's one error transport, with Validated<T> (gpusched/util/validated.h) its other
// half: a reader that stops at the first problem throws an InputError (or a type derived from it);
// one that finds every problem returns them as Problems in a Validated<T>, and Problems that must
// cross a layer that throws travel as one InputError holding every line (ThrowIfAny). A layer an
// error passes through adds context in front ("kubeconfig.yaml: user \"alice\": client-key: ")
// and keeps the inner message whole (InContext); only the command's edge prints it. Exceptions of
// other types are a third-party library's (yaml-cpp, simdjson, OpenSSL); each is converted where it
// is caught.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/util/validated.h"

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
  // Every line of `problems` (at least one), as a reader that collects them found them; what() is
  // the lines joined with newlines.
  explicit InputError(const Problems& problems);

  // The problems, one line each: those it was made from, or what() alone.
  std::vector<std::string> lines() const;

 private:
  std::vector<std::string> lines_;  // empty when made from one message
};

// `context` in front of `inner`'s message, which stays whole: "CONTEXT: INNER".
std::string InContext(std::string_view context, const InputError& inner);

// Throws an InputError holding every line of `problems` when there is any.
void ThrowIfAny(const Problems& problems);

// `part`'s value when it has no problems; else throws them (ThrowIfAny).
template <class T>
T ValueOrThrow(Validated<T> part) {
  ThrowIfAny(part.problems);
  return std::move(part.value);
}

}  // namespace gpusched
