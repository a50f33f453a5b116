#include "gpusched/app/command_line.h"

#include <cstdio>
#include <iostream>

#include "gpusched/policy/policy_file.h"
#include "gpusched/util/input_error.h"

namespace gpusched {

void PrintError(const std::string& error) { std::fprintf(stderr, "gpusched: %s\n", error.c_str()); }

void PrintErrors(const Problems& problems) {
  for (const auto& line : problems.lines()) PrintError(line);
}

int Fail(const std::string& message) {
  PrintError(message);
  return kUsageExit;
}

int Fail(const Problems& problems) {
  PrintErrors(problems);
  return kUsageExit;
}

int RunCatchingInputErrors(const std::function<int()>& command) {
  try {
    return command();
  } catch (const InputError& e) {
    for (const std::string& line : e.lines()) PrintError(line);
    return kUsageExit;
  }
}

std::optional<int> ParseOrHelp(FlagSet& flags, const std::vector<std::string>& args) {
  if (Problems problems = flags.Parse(args); !problems.empty()) return Fail(problems);
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  return std::nullopt;
}

void CheckNoArguments(const FlagSet& flags, const std::string& command, Problems& problems) {
  if (!flags.positional().empty()) {
    problems.Add(command + " takes no arguments: " + flags.positional()[0]);
  }
}

Validated<std::shared_ptr<const Policy>> PolicyFromFlag(const std::string& path) {
  if (path.empty()) return {std::make_shared<const Policy>(DefaultPolicySpec()), {}};
  auto policy = LoadPolicy(path);
  if (!policy.ok()) policy.problems.Add("invalid policy " + path);
  return policy;
}

}  // namespace gpusched
