// FlagSet: the command-line flags of one subcommand, declared once and used both to parse
// arguments and to print --help, so the two never disagree.
//
// Accepts --name value, --name=value, and bare --name for boolean flags. Not synchronized.
#ifndef GPUSCHED_CLI_FLAGS_H_
#define GPUSCHED_CLI_FLAGS_H_

#include <map>
#include <string>
#include <vector>

#include "gpusched/util/validated.h"

namespace gpusched {

struct FlagSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // e.g. "FILE"; empty for a boolean flag
  std::string default_value;
  std::string help;
};

class FlagSet {
 public:
  FlagSet(std::string command, std::string usage, std::string summary);

  FlagSet& Add(FlagSpec spec);
  // Parses `args` (without the program and subcommand names). Returns the problem that stopped it
  // (an unknown flag, a missing value: what follows cannot be read reliably), none on success.
  // "--help" sets help_requested().
  Problems Parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_requested_; }
  // The last value given, or the default.
  const std::string& Get(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  const std::vector<FlagSpec>& specs() const { return specs_; }

  std::string Help() const;

 private:
  const FlagSpec* Find(const std::string& name) const;

  std::string command_;
  std::string usage_;
  std::string summary_;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  bool help_requested_ = false;
};

}  // namespace gpusched

#endif  // GPUSCHED_CLI_FLAGS_H_
