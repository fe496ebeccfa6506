// --raw: plain TCP with no testio protocol. The server is a sink any nc/socat/script can send to;
// the client sends a file (or generated data) to any plain TCP receiver. Both print bytes,
// elapsed time, rate, calls and a digest of what crossed.
#pragma once

#include <ostream>

#include "config/config.hpp"

namespace testio::session {

// `testio -s --raw`: one report line per connection as it closes, until a signal (or, with -1,
// after one connection). Returns the exit code.
int run_raw_server(const config::Config& config, std::ostream& out);

// `testio -c HOST --raw [-F FILE]`: one connection; returns 0 when everything was sent.
// With --rr: N connections of request/response against any plain echo server.
int run_raw_client(const config::Config& config, std::ostream& out);

}  // namespace testio::session
