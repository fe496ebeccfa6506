// `testio -c HOST --iperf3`: a stock `iperf3 -s` as the client's peer, forward, reverse (-R) or
// both ways (--bidir), TCP or UDP. The test runs through testio's one client lifecycle
// (lifecycle/client_lifecycle.cpp); this peer speaks iperf3's control protocol around it.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "lifecycle/client_peer.hpp"

namespace testio::iperf3 {

// The peer of one test, which the program makes for lifecycle::run_client().
std::unique_ptr<lifecycle::ClientPeer> iperf3_peer(const config::Config& config);

}  // namespace testio::iperf3
