// `gpusched policy check FILE`: validates a policy file and prints the effective policy.
#ifndef GPUSCHED_APP_POLICY_COMMAND_H_
#define GPUSCHED_APP_POLICY_COMMAND_H_

#include <string>
#include <vector>

namespace gpusched {

// Exit 0 with the effective policy on stdout; 1 with each error (FILE:LINE:COLUMN: KEY: PROBLEM)
// on stderr; kUsageExit on a usage error.
int RunPolicyCommand(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_APP_POLICY_COMMAND_H_
