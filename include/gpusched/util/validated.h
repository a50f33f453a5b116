// Validated<T>: a value read from outside input together with every problem found in it, as
// Kubernetes' Validate() returns []error, so that a user fixes all of them in one round instead of
// meeting them one run at a time. Two kinds of reader return one:
//
//  - a command's front door: FromFlags reads the options from flags; a part of the options read by
//    a reader of its own (the inventory flags, a listener) is another Validated. Reading options
//    never does I/O: a file a flag names is checked when the command reads it, so these problems
//    say what is wrong with the flags alone.
//  - a file reader (a policy, MIG layouts): each problem is one line in the InputError style,
//    FILE:LINE:COLUMN: KEY: PROBLEM (gpusched/util/input_error.h); a file that cannot be read at
//    all is one problem naming it.
//
// A part's problems join the whole's with Problems::Take, in the order the checks ran. A problem is
// one line of text without the "gpusched: " prefix (gpusched/app/command_line.h prints it; the
// policy watcher logs it). Problems that must cross a layer that throws travel as one InputError
// holding every line (ThrowIfAny, ValueOrThrow: gpusched/util/input_error.h). Not synchronized.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpusched {

template <class T>
struct Validated;

class Problems {
 public:
  void Add(std::string line) { lines_.push_back(std::move(line)); }
  bool empty() const { return lines_.empty(); }
  const std::vector<std::string>& lines() const { return lines_; }

  // Adds `part`'s problems to these; returns its value.
  template <class T>
  T Take(Validated<T> part);

 private:
  std::vector<std::string> lines_;  // in the order the checks ran
};

template <class T>
struct Validated {
  T value;  // as far as the input could be read: use only when ok()
  Problems problems;

  bool ok() const { return problems.empty(); }
};

template <class T>
T Problems::Take(Validated<T> part) {
  for (auto& line : part.problems.lines_) lines_.push_back(std::move(line));
  return std::move(part.value);
}

}  // namespace gpusched
