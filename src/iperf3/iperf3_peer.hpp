// `testio -c HOST --iperf3`: a stock `iperf3 -s` as the client's peer, forward, reverse (-R) or
// both ways (--bidir), TCP or UDP. The test runs through testio's one client lifecycle
// (session/client.cpp); this peer speaks iperf3's control protocol around it.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "session/client_peer.hpp"

namespace testio::iperf3 {

// The peer of one test (a session::PeerMaker: the program hands it to session::run_client()).
std::unique_ptr<session::ClientPeer> iperf3_peer(const config::Config& config);

}  // namespace testio::iperf3
