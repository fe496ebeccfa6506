// spdlog set-up: diagnostics go to stderr so stdout carries only the report.
#pragma once

namespace testio::util {

// verbosity: 0 = warnings and errors, 1 = info (-v), 2 = debug (--debug).
void setup_logging(int verbosity);

}  // namespace testio::util
