// `testio -c URL [N] --transfers COUNT` (or --urls FILE): COUNT downloads from any HTTP/1.1 server,
// N at a time over the worker threads. No control connection: the report is what this side counted.
#pragma once

#include "config/config.hpp"
#include "report/reporter.hpp"

namespace testio::session {

// Returns the exit code: 0 when every transfer completed, 1 when any failed or a signal ended it.
int run_http_client(const config::Config& config, report::Reporter& reporter);

}  // namespace testio::session
