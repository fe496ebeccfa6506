// --raw: plain TCP with no testio protocol. The server is a sink any nc/socat/script can send to;
// it prints bytes, elapsed time, rate, calls and a digest of what crossed (raw_clients.cpp). (The client's side of
// --raw is a peer of the one client lifecycle: client_peer.cpp.)
#pragma once

#include <memory>
#include <ostream>

#include "config/config.hpp"
#include "metrics/server_metrics.hpp"
#include "lifecycle/foreign_clients.hpp"

namespace testio::plain {

// `testio -s --raw`'s peers, for run_server(): one report line per connection as it closes (and
// a peer address's connections summed together), until a signal or, with -1, one connection. What
// each connection read counts in `metrics` (--metrics) once it has closed.
std::unique_ptr<lifecycle::ForeignClients> raw_clients(const config::Config& config, std::ostream& out,
                                            metrics::ServerMetrics& metrics);

}  // namespace testio::plain
