// This side's figures of an iperf3 test, by direction, and as iperf3's results message carries
// them; and the workload side iperf3's data run on. Both iperf3 sessions use them: the server's
// (server.cpp) and the client's peer (client_peer.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "lifecycle/exchange.hpp"
#include "protocols/iperf3/messages.hpp"
#include "spec/test_spec.hpp"
#include "workloads/layout.hpp"
#include "workloads/udp/udp.hpp"
#include "workloads/workload.hpp"

namespace testio::iperf3 {

// One direction's figures once the streams ended.
struct DirectionResults {
  bool present = false;
  lifecycle::SideResults side;
  std::vector<std::uint32_t> connections;  // which of the test's connections, in order
};

// What `local` sent and what it received, taken from `figures` (this side's measurement). With
// `window_end_s` the senders' figures run to that moment even when a sender's last write completed
// earlier, as iperf3 times its streams.
std::pair<DirectionResults, DirectionResults> by_direction(lifecycle::DirectedResults figures,
                                                           const workloads::DirectionLayout& layout,
                                                           workloads::Side local, std::optional<double> window_end_s);

// This side's results as iperf3 exchanges them: each of the test's `connections` by its iperf3 id
// (`udp`: as iperf3 counts datagrams).
Results results_of(const DirectionResults& sent, const DirectionResults& received, std::size_t connections, bool udp);

// --get-server-output asked by an iperf3 client: this side's streams as text, a line each and
// their sum per direction, which the client prints after "Server output:" (or puts in its -J).
std::string output_text(const DirectionResults& sent, const DirectionResults& received);

// The workload side of iperf3's data on `local`: bulk TCP whose data end without EOF, or with
// `udp_wire` UDP flows whose datagrams carry that header (iperf3's 32- or 64-bit counters).
std::unique_ptr<workloads::TestSide> make_side(workloads::Side local, const spec::TestSpec& spec,
                                               std::optional<workloads::udp::Wire> udp_wire);

}  // namespace testio::iperf3
