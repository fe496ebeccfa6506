// The client's peer for -c URL and --urls: any HTTP servers, which the http workload's slots reach
// themselves through libcurl; nothing is said to them but the requests.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "lifecycle/client_peer.hpp"

namespace testio::http {

// Any HTTP servers, named by the URLs.
std::unique_ptr<lifecycle::ClientPeer> http_peer(const config::Config& config);

}  // namespace testio::http
