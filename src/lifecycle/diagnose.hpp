// --diagnose: the client's test, then short variations chosen by its verdict (lifecycle/diagnose.cpp).
#pragma once

#include "config/config.hpp"
#include "lifecycle/peer_maker.hpp"
#include "report/reporter.hpp"

namespace testio::lifecycle {

// The test `config` asks for through `reporter`, whose end waits for the variations and carries
// their table; the exit code is the test's own. On the calling thread.
int run_client_diagnosed(const config::Config& config, report::Reporter& reporter, const PeerMaker& make_peer);

}  // namespace testio::lifecycle
