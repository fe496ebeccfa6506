// spdlog set-up: diagnostics go to stderr (or the --logfile) so stdout carries only the report.
#pragma once

#include <string>

namespace testio::util {

// verbosity: 0 = warnings and errors, 1 = info (-v), 2 = debug (--debug). A non-empty `logfile`
// receives the diagnostics instead of stderr; throws std::runtime_error if it cannot be opened.
void setup_logging(int verbosity, const std::string& logfile = {});

}  // namespace testio::util
