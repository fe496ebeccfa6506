// A stock iperf3 client as the peer of a test on this server, run by testio's one server
// lifecycle (lifecycle::ServerTest): CREATE_STREAMS once the parameters are taken, its streams
// gathered by cookie (or, -u, by iperf3's UDP handshake: server.cpp), TEST_START and
// TEST_RUNNING, the window the client times, TEST_END, the results both ways, DISPLAY_RESULTS and
// IPERF_DONE. The report puts the client's counts beside this side's.
#pragma once

#include <memory>
#include <string>

#include "protocols/iperf3/channel.hpp"
#include "protocols/iperf3/messages.hpp"
#include "lifecycle/server_peer.hpp"

namespace testio::iperf3 {

// The client of one test on `control`, which asked for `params`; `name`: where it connected from.
std::unique_ptr<lifecycle::ServerPeer> iperf3_server_peer(Control& control, const Params& params, std::string name);

}  // namespace testio::iperf3
