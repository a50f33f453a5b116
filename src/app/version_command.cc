#include "gpusched/app/version_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"

namespace gpusched {

int RunVersionCommand(const std::vector<std::string>& args) {
  FlagSet flags("gpusched version", "gpusched version", "Prints the version of gpusched.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  std::cout << "gpusched " << GPUSCHED_VERSION << "\n";
  return 0;
}

}  // namespace gpusched
