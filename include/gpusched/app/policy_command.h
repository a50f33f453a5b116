// `gpusched policy check FILE`: validates a policy file and prints the effective policy.
#pragma once

#include <string>
#include <vector>

namespace gpusched {

// Exit 0 with the effective policy on stdout; 1 with each error (FILE:LINE:COLUMN: KEY: PROBLEM)
// on stderr; kUsageExit on a usage error.
int RunPolicyCommand(const std::vector<std::string>& args);

}  // namespace gpusched
