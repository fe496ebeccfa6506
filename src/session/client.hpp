// The client's whole test, top to bottom.
#pragma once

#include "config/config.hpp"
#include "report/reporter.hpp"

namespace testio::session {

// Runs one test against the server in `config`, reporting through `reporter`. Returns the exit
// code: 0 when every stream finished and both sides counted the same bytes, 1 otherwise.
int run_client(const config::Config& config, report::Reporter& reporter);

}  // namespace testio::session
