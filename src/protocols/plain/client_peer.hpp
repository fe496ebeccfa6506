// The client's peer with --raw: a plain TCP receiver or, with --rr, an echo server.
#pragma once

#include <memory>
#include <ostream>

#include "config/config.hpp"
#include "lifecycle/client_peer.hpp"

namespace testio::plain {

// A plain TCP receiver or, with --rr, echo server; a single transfer's line (in text; JSON is the
// usual document), and --rr's figures, go to `out` as a raw sink prints them.
std::unique_ptr<lifecycle::ClientPeer> plain_tcp_peer(const config::Config& config, std::ostream& out);

}  // namespace testio::plain
