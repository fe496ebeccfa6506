// -u: UDP flows, N each way as a bulk test's connections, over the same workers (workload "udp").
#pragma once

#include "workloads/udp/datagram.hpp"
#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {

const Workload& workload();

// Its part of the spec (workloads/part.hpp): the kernel's fast paths each side may use.
struct UdpSpec {
  bool gso = true;           // --no-gso: one datagram per send instead of UDP_SEGMENT's many
  bool gro = true;           // --no-gro: one datagram per receive instead of UDP_GRO's coalesced buffers
  std::uint32_t batch = 16;  // --batch: messages per sendmmsg/recvmmsg call; 1 = sendmsg/recvmsg
  bool connected = true;     // --no-connect: the client's sockets sendto/recvfrom instead of connect()
  bool dont_fragment = false;  // --dont-fragment: DF on every datagram (IP_PMTUDISC_DO), both sides

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("udp_gso", part.gso);
    visit("udp_gro", part.gro);
    visit("udp_batch", part.batch);
    visit("udp_connected", part.connected);
    visit("udp_dont_fragment", part.dont_fragment);
  }
};

// -u's default datagram size: one 1500-byte Ethernet frame over IPv4 or IPv6 (as iperf3 on a
// 1500-byte MTU, where it takes the control connection's MSS), and its rate, iperf3's 1 Mbit/s.
inline constexpr std::uint64_t kDefaultDatagram = 1448;
inline constexpr double kDefaultUdpRate = 1048576;

// Its options group (udp_options.cpp): -u and its fast paths. It fills after the test's and the
// tuning's groups: its defaults take only what they left unset.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);
// A side whose flows speak `wire`. iperf3's sessions use it: they set each flow's socket up
// themselves (iperf3's own handshake) and hand it over with route_flow(), on either side.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire);

}  // namespace testio::workloads::udp
