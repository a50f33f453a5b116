#include "gpusched/cli/flags.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace gpusched {

FlagSet::FlagSet(std::string command, std::string usage, std::string summary)
    : command_(std::move(command)), usage_(std::move(usage)), summary_(std::move(summary)) {}

FlagSet& FlagSet::Add(FlagSpec spec) {
  if (spec.name == "help" || Find(spec.name) != nullptr) {
    throw std::logic_error("flags of " + command_ + ": --" + spec.name + " declared twice");
  }
  specs_.push_back(std::move(spec));
  return *this;
}

FlagSet& FlagSet::AddTable(std::string_view table) {
  auto fail = [&](size_t line, const std::string& problem) {
    throw std::logic_error("flag table of " + command_ + ": line " + std::to_string(line) + ": " +
                           problem);
  };
  std::optional<FlagSpec> open;
  size_t open_line = 0;
  auto close = [&] {
    if (!open) return;
    if (open->help.empty()) fail(open_line, "--" + open->name + " has no help");
    Add(std::move(*open));
    open.reset();
  };
  std::istringstream lines{std::string(table)};
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    if (first > 0) {
      if (!open) fail(number, "help before any flag");
      open->help += (open->help.empty() ? "" : " ") + line.substr(first);
      continue;
    }
    if (!line.starts_with("--")) fail(number, "an entry starts with --NAME");
    close();
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    FlagSpec spec{w[0].substr(2), "", "", ""};
    size_t i = 1;
    if (i < w.size() && w[i] != "=") spec.value_name = w[i++];
    if (i < w.size() && w[i] == "=") {
      if (i + 2 != w.size()) fail(number, "a default is one word after =");
      spec.default_value = w[i + 1];
      i = w.size();
    }
    if (i != w.size() || spec.name.empty()) fail(number, "expected --NAME [VALUE] [= DEFAULT]");
    open = std::move(spec);
    open_line = number;
  }
  close();
  return *this;
}

const FlagSpec* FlagSet::Find(const std::string& name) const {
  for (const auto& s : specs_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Problems FlagSet::Parse(const std::vector<std::string>& args) {
  Problems problems;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const FlagSpec* spec = Find(name);
    if (!spec) {
      problems.Add("unknown flag --" + name + " (see " + command_ + " --help)");
      break;
    }
    if (spec->value_name.empty()) {
      if (value && *value != "true" && *value != "false") {
        problems.Add("--" + name + " takes no value other than true or false");
        break;
      }
      values_[name] = value.value_or("true");
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        problems.Add("--" + name + " needs a value (" + spec->value_name + ")");
        break;
      }
      value = args[++i];
    }
    values_[name] = *value;  // the last one given wins
  }
  return problems;
}

const std::string& FlagSet::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  static const std::string kEmpty;
  const FlagSpec* spec = Find(name);
  return spec ? spec->default_value : kEmpty;
}

std::string FlagSet::Help() const {
  std::string out = "Usage: " + usage_ + "\n\n" + summary_ + "\n";
  if (specs_.empty()) return out;
  out += "\nFlags:\n";
  size_t width = 0;
  auto left = [](const FlagSpec& s) {
    return "--" + s.name + (s.value_name.empty() ? "" : " " + s.value_name);
  };
  for (const auto& s : specs_) width = std::max(width, left(s).size());
  for (const auto& s : specs_) {
    std::string l = left(s);
    out += "  " + l + std::string(width - l.size() + 2, ' ') + s.help;
    if (!s.default_value.empty()) out += " (default: " + s.default_value + ")";
    out += "\n";
  }
  out += "  --help" + std::string(width > 4 ? width - 4 : 2, ' ') + "show this help\n";
  return out;
}

}  // namespace gpusched
