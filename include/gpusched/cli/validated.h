// Validated<T>: options read from flags together with every problem found in them, as
// Kubernetes' Validate() returns []error, so that a user fixes all of them in one round instead of
// meeting them one run at a time. Every front door's FromFlags returns one; a part of the options
// read by a reader of its own (the inventory flags, a listener) is another Validated, taken into
// the whole with Problems::Take.
//
// A problem is one line of text without the "gpusched: " prefix (gpusched/app/command_line.h
// prints it). Reading options never does I/O: a file a flag names is checked when the command
// reads it, so Validated says what is wrong with the flags alone. Not synchronized.
#ifndef GPUSCHED_CLI_VALIDATED_H_
#define GPUSCHED_CLI_VALIDATED_H_

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
  T value;  // as far as the flags could be read: use only when ok()
  Problems problems;

  bool ok() const { return problems.empty(); }
};

template <class T>
T Problems::Take(Validated<T> part) {
  for (auto& line : part.problems.lines_) lines_.push_back(std::move(line));
  return std::move(part.value);
}

}  // namespace gpusched

#endif  // GPUSCHED_CLI_VALIDATED_H_
