// The client's whole test, top to bottom.
#pragma once

#include <ostream>

#include "config/config.hpp"
#include "report/reporter.hpp"
#include "session/client_peer.hpp"

namespace testio::session {

// Runs one test against the peer in `config` (a testio server, a plain TCP peer with --raw, HTTP
// servers with -c URL, a stock iperf3 server with --iperf3, made by `iperf3`), reporting through
// `reporter`; a plain peer's single transfer and --rr --raw print their line to `out` instead.
// Returns the exit code: 0 when every stream finished and both sides counted the same bytes, 1
// otherwise.
int run_client(const config::Config& config, report::Reporter& reporter, std::ostream& out,
               PeerMaker iperf3 = nullptr);

}  // namespace testio::session
