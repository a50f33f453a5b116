#include "gpusched/app/policy_command.h"

#include <cstdio>
#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/policy/policy_file.h"

namespace gpusched {

int RunPolicyCommand(const std::vector<std::string>& args) {
  FlagSet flags(
      "gpusched policy", "gpusched policy check FILE",
      "check: validates a policy file. Prints the effective policy (every default filled\n"
      "in) and exits 0, or prints each error as gpusched: FILE:LINE:COLUMN: KEY: PROBLEM and\n"
      "exits 1.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  const auto& words = flags.positional();
  if (words.size() != 2 || words[0] != "check") return Fail("usage: gpusched policy check FILE");
  auto policy = LoadPolicy(words[1]);
  if (!policy.ok()) {
    size_t count = policy.problems.lines().size();
    PrintErrors(policy.problems);
    PrintError(words[1] + ": " + std::to_string(count) + " error" + (count == 1 ? "" : "s"));
    return 1;
  }
  std::cout << "# " << words[1] << ": valid, digest " << policy.value->digest() << "\n"
            << FormatPolicy(policy.value->spec());
  return 0;
}

}  // namespace gpusched
