// Kubernetes name syntax, checked before a name goes into a generated command: the planning
// reports print ready-to-run `kubectl` lines, and a node name or label value read from the cluster
// or a file could otherwise carry a flag (`--all`), a second command or an escape sequence into a
// shell. A command is built only from names that pass; otherwise the reason it is refused.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// A DNS subdomain (RFC 1123), what a Node's name must be: at most 253 of a-z 0-9 '-' '.', each
// dot-separated part non-empty and starting and ending with a-z or 0-9.
bool IsDnsSubdomain(std::string_view s);
// A label value: at most 63 of A-Z a-z 0-9 '-' '_' '.', alphanumeric at both ends (the empty
// value, which Kubernetes allows, is refused: a command never sets a label to nothing).
bool IsLabelValue(std::string_view s);

// A generated command line, or why none was made (`refused` non-empty, `command` empty).
struct KubectlLine {
  std::string command;
  std::string refused;
};
// `kubectl label node <node> <key>=<value> --overwrite`, when `node` is a DNS subdomain and `value`
// a label value (`key` is the caller's own constant); else the reason, with the name quoted.
KubectlLine LabelNodeCommand(std::string_view node, std::string_view key, std::string_view value);

}  // namespace gpusched
