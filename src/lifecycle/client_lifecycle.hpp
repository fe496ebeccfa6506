// The client's whole test, top to bottom.
#pragma once

#include "config/config.hpp"
#include "report/reporter.hpp"
#include "lifecycle/peer_maker.hpp"

namespace testio::lifecycle {

// Runs one test of `config` against the peer `make_peer` makes (whichever protocol it speaks),
// reporting through `reporter` or the reporter the peer gives instead. Returns the exit code: 0
// when every stream finished and both sides counted the same bytes, 1 otherwise.
int run_client(const config::Config& config, report::Reporter& reporter, const PeerMaker& make_peer);

}  // namespace testio::lifecycle
