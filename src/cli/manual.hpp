// testio(1) and the bash completion, both made from the option table that --help prints, so
// neither can drift from it. The build runs `testio --man` and `testio --bash-completion` and
// installs what they print (docs/packaging.md).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "options/option_table.hpp"

namespace testio::cli {

using options::OptionTable;
using options::OptionHelp;


// The groups --help, the manual and the completion show, in the table's order: all of them but
// the build's own (Packaging) and the positional N, so a group a workload adds is never left out.
std::vector<std::string> help_groups(const OptionTable& options);

// The manual page in roff (man(7) macros).
std::string man_page(const OptionTable& options);

// A bash completion script: every option, and file names after the options that take a file.
std::string bash_completion(const OptionTable& options);

}  // namespace testio::cli
