// -u: UDP flows, N each way as a bulk test's connections, over the same workers (workload "udp").
#pragma once

#include "workloads/udp/datagram.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {

const Workload& workload();
// A side whose flows speak `wire`. iperf3's sessions use it: they set each flow's socket up
// themselves (iperf3's own handshake) and hand it over with route_flow(), on either side.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire);

}  // namespace testio::workloads::udp
