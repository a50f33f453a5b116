// FlagSet: the command-line flags of one subcommand, declared once and used both to parse
// arguments and to print --help, so the two never disagree.
//
// Accepts --name value, --name=value, and bare --name for boolean flags. Not synchronized.
//
// A command declares its flags as a table in the shape --help prints them (AddTable), so a flag's
// name, value, default and help read as one entry:
//
//   --listen HOST:PORT = 127.0.0.1:8888
//       address to listen on; the help goes on over as many indented lines as it takes
//   --json = false
//       a boolean flag: no value name
//
// An entry is "--NAME [VALUE] [= DEFAULT]" at the start of a line, then its help on the indented
// lines below, joined by single spaces. A default is one word; without "=" it is empty.
#pragma once

#include <map>
#include <string>
#include <string_view>
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

  // Adds one flag. A name declared already (or --help, which every command has) is a mistake in
  // gpusched's own source: it throws std::logic_error naming the command and the flag.
  FlagSet& Add(FlagSpec spec);
  // Adds the flags of `table`, in its order. A malformed table is a mistake in gpusched's own
  // source, not in the input: it throws std::logic_error naming the command and the line.
  FlagSet& AddTable(std::string_view table);
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
