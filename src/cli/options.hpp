// The command line: the option table, from general to specific, filling a Config.
#pragma once

#include <string>

#include "config/config.hpp"

namespace testio::cli {

struct ParsedCommandLine {
  enum class Action { run, help, version, check } action = Action::run;
  config::Config config;
  std::string help_text;
};

// Throws util::UsageError with one sentence for anything it cannot accept. Checks every rule;
// --dry-run stops there (Action::check), which is how `testio campaign` checks every cell first.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace testio::cli
