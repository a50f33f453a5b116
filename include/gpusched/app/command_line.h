// What every subcommand's front door shares: how it fails, how it answers --help, and how it reads
// a --policy flag. Each subcommand lives in a file of its own (src/app/<name>_command.cc) with an
// options struct whose FromFlags reads and validates its flags, every problem at once
// (gpusched/util/validated.h) and without I/O; main.cc only dispatches on the command name.
// docs/architecture.md, "Adding a command", is the recipe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/cli/flags.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/validated.h"

namespace gpusched {

// The exit code of a command whose arguments are wrong: 2, as for an unknown flag.
inline constexpr int kUsageExit = 2;

// Every error line a command prints to stderr reads "gpusched: <error>", a located one
// "gpusched: FILE:LINE:COLUMN: KEY: PROBLEM" (gpusched/util/input_error.h).
void PrintError(const std::string& error);
// PrintError for each problem, in order.
void PrintErrors(const Problems& problems);
// PrintError(message); returns kUsageExit.
int Fail(const std::string& message);
// PrintError for each problem; returns kUsageExit.
int Fail(const Problems& problems);

// Runs `command` (what a front door does once its options are read); an InputError it throws, a
// file, an address or an API server the flags name being unreadable or invalid, is printed (each
// of its lines) and ends it with kUsageExit. This is where a command's errors are printed, once:
// the layers below throw or return them (gpusched/util/input_error.h).
int RunCatchingInputErrors(const std::function<int()>& command);

// Parses `args` into `flags`; returns the exit code when the command is already done (a flag
// error, printed, or --help, printed to stdout), nullopt when it should run.
std::optional<int> ParseOrHelp(FlagSet& flags, const std::vector<std::string>& args);

// The front door's first steps for a command whose options struct has `static FlagSet Flags()`
// and `static Validated<Options> FromFlags(const FlagSet&)`: `args` parsed and read into
// `options`. Returns the exit code when the command is done before it runs (--help answered, or a
// flag error or the options' problems printed), nullopt when it should run.
template <typename Options>
std::optional<int> ReadCommandOptions(const std::vector<std::string>& args, Options& options) {
  FlagSet flags = Options::Flags();
  if (std::optional<int> done = ParseOrHelp(flags, args)) return done;
  Validated<Options> read = Options::FromFlags(flags);
  if (!read.ok()) return Fail(read.problems);
  options = std::move(read.value);
  return std::nullopt;
}

// Adds a problem when `flags` holds positional arguments, which `command` takes none of.
void CheckNoArguments(const FlagSet& flags, const std::string& command, Problems& problems);

// The policy a --policy flag names: the file at `path`, or the built-in default when `path` is
// empty. When the file does not validate, its problems, then "invalid policy PATH".
Validated<std::shared_ptr<const Policy>> PolicyFromFlag(const std::string& path);

}  // namespace gpusched
