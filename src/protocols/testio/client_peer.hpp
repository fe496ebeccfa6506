// The client's peer against a testio server: testio's control protocol around the test.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "lifecycle/client_peer.hpp"

namespace testio::control {

// A testio server, at -c HOST -p PORT.
std::unique_ptr<lifecycle::ClientPeer> testio_peer(const config::Config& config);

}  // namespace testio::control
