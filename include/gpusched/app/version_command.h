// `gpusched version`: prints the version of the binary.
#pragma once

#include <string>
#include <vector>

namespace gpusched {

int RunVersionCommand(const std::vector<std::string>& args);

}  // namespace gpusched
