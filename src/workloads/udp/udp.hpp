// -u: UDP flows, N each way as a bulk test's connections, over the same workers (workload "udp").
#pragma once

#include "workloads/udp/datagram.hpp"
#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {

const Workload& workload();

// Its options group (udp_options.cpp): -u and its fast paths. It fills after the test's and the
// tuning's groups: its defaults take only what they left unset.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);
// A side whose flows speak `wire`. iperf3's sessions use it: they set each flow's socket up
// themselves (iperf3's own handshake) and hand it over with route_flow(), on either side.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire);

}  // namespace testio::workloads::udp
