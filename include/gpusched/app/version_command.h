// `gpusched version`: prints the version of the binary.
#ifndef GPUSCHED_APP_VERSION_COMMAND_H_
#define GPUSCHED_APP_VERSION_COMMAND_H_

#include <string>
#include <vector>

namespace gpusched {

int RunVersionCommand(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_APP_VERSION_COMMAND_H_
