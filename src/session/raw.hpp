// --raw: plain TCP with no testio protocol. The server is a sink any nc/socat/script can send to;
// it prints bytes, elapsed time, rate, calls and a digest of what crossed. (The client's side of
// --raw is a peer of the one client lifecycle: plain_peer.cpp.)
#pragma once

#include <ostream>

#include "config/config.hpp"
#include "report/reporter.hpp"

namespace testio::session {

// `testio -s --raw`: one report line per connection as it closes, until a signal (or, with -1,
// after one connection). Returns the exit code.
int run_raw_server(const config::Config& config, std::ostream& out);

}  // namespace testio::session
