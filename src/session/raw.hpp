// --raw: plain TCP with no testio protocol. The server is a sink any nc/socat/script can send to;
// the client sends a file (or generated data) over N connections to any plain TCP receiver. Both
// print bytes, elapsed time, rate, calls and a digest of what crossed.
#pragma once

#include <ostream>

#include "config/config.hpp"
#include "report/reporter.hpp"

namespace testio::session {

// `testio -s --raw`: one report line per connection as it closes, until a signal (or, with -1,
// after one connection). Returns the exit code.
int run_raw_server(const config::Config& config, std::ostream& out);

// `testio -c HOST --raw [N] [-t | -n | -F FILE]`: N connections, each done once its receiver has
// closed. One connection without -i prints the line a raw sink prints; otherwise `reporter` gets
// the test's intervals and figures as for a testio peer (the sender's side only). With --rr: N
// connections of request/response against any plain echo server. Returns the exit code.
int run_raw_client(const config::Config& config, report::Reporter& reporter, std::ostream& out);

}  // namespace testio::session
