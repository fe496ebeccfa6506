// -u: UDP flows, N each way as a bulk test's connections, over the same workers (workload "udp").
// Its options, rules and datagram wire (udp.cpp), its flows and sides (udp_streams.cpp) and its
// report section (udp_section.cpp) share this one header, which the session's UDP door, iperf3's
// sessions and the fuzzer include for the wire: it declares what it names of the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/udp_counters.hpp"
#include "workloads/forward.hpp"

namespace testio::workloads::udp {

// The header at the front of every UDP test datagram, and its reading from untrusted bytes.
// testio's own datagrams begin as iperf3's do with 64-bit counters (so a capture reads the same
// under either tool's dissector), then say whose they are:
//
//   0  sec      u32  the sender's clock at send (CLOCK_REALTIME seconds; iperf3 writes its monotonic clock)
//   4  usec     u32  ... and microseconds, below 1,000,000
//   8  sequence u64  from 0 per flow
//   16 magic    u32  "tioU" (a flow's last word, sent after its last datagram: "tioE", whose
//                    sequence is then the number of datagrams the flow sent)
//   20 stream   u32  the flow's number in its test
//   24 test_id  u64  the test the control connection agreed, so strays are told apart
//
// iperf3's own layouts are 12 bytes (32-bit counter) or 16 (64-bit). All fields big-endian.
// Pure functions; any thread.

inline constexpr std::size_t kTestioHeader = 32;
inline constexpr std::size_t kIperf3Header32 = 12;
inline constexpr std::size_t kIperf3Header64 = 16;
inline constexpr std::uint32_t kMagic = 0x74696f55;     // "tioU"
inline constexpr std::uint32_t kEndMagic = 0x74696f45;  // "tioE"
// The largest UDP payload over IPv4 and IPv6 (65535 less the IP and UDP headers).
inline constexpr std::size_t kMaxPayloadV4 = 65507;
inline constexpr std::size_t kMaxPayloadV6 = 65527;

struct DatagramHeader {
  std::uint32_t sec = 0;
  std::uint32_t usec = 0;
  std::uint64_t sequence = 0;
  std::uint32_t stream = 0;
  std::uint64_t test_id = 0;
  bool end = false;  // the flow's end marker: `sequence` datagrams were sent in all

  double sent_s() const noexcept { return static_cast<double>(sec) + static_cast<double>(usec) * 1e-6; }
};

// A big-endian unsigned field of `bytes` (at most 8) bytes, as every layout here writes them.
std::uint64_t read_be(const unsigned char* data, int bytes) noexcept;
void write_be(std::uint64_t value, int bytes, unsigned char* out) noexcept;

// Writes the 32-byte testio header at `out` (which holds at least kTestioHeader bytes).
void write_header(const DatagramHeader& header, unsigned char* out) noexcept;
// A testio datagram's header; nullopt when it is shorter than the header, lacks the magic, or
// its usec is out of range: a stray, to be counted and dropped.
std::optional<DatagramHeader> read_header(const unsigned char* data, std::size_t size) noexcept;

// A flow's hello, the first datagram its client socket sends (until the server acknowledges it),
// and the server's answer from the flow's own socket: magic ("tioH" or "tioA"), protocol version,
// test id, flow number; 24 bytes big-endian. The server reads a hello from anyone: nullopt for
// anything else.
inline constexpr std::size_t kHelloSize = 24;
struct FlowHello {
  std::uint64_t test_id = 0;
  std::uint32_t stream = 0;
};
void write_hello(const FlowHello& hello, bool answer, unsigned char* out) noexcept;
std::optional<FlowHello> read_hello(const unsigned char* data, std::size_t size, bool answer) noexcept;

// iperf3's header (its sec, usec, sequence) with 64-bit or 32-bit counters; nullopt when too short
// or usec is out of range.
std::optional<DatagramHeader> read_iperf3_header(const unsigned char* data, std::size_t size, bool counters_64bit) noexcept;
void write_iperf3_header(const DatagramHeader& header, bool counters_64bit, unsigned char* out) noexcept;

// Whose datagrams a flow speaks: testio's, or iperf3's with 32- or 64-bit counters, which carry no
// test or flow, count from 1 and end without a marker.
enum class Wire { testio, iperf3_32, iperf3_64 };
std::size_t header_size(Wire wire) noexcept;
// `header.sequence` counts from 0 whatever the wire (iperf3's count is one more).
void write_wire_header(Wire wire, const DatagramHeader& header, unsigned char* out) noexcept;
// One of flow `stream` of test `test_id`'s datagrams as `wire` reads it, its sequence from 0;
// nullopt for a stray (too short, out of range, another test's or flow's, iperf3's count 0).
std::optional<DatagramHeader> read_wire_header(Wire wire, const unsigned char* data, std::size_t size,
                                               std::uint64_t test_id, std::uint32_t stream) noexcept;

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

// Its options group (udp.cpp): -u and its fast paths. It fills after the test's and the
// tuning's groups: its defaults take only what they left unset.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);
// A side whose flows speak `wire` (udp_streams.cpp). iperf3's sessions use it: they set each
// flow's socket up themselves (iperf3's own handshake) and hand it over with route_flow(), on
// either side.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire);

// The UDP workload's own part of a report (udp_section.cpp: end.testio.udp and the "udp:" lines):
// what the flows were asked to do and how this side ran them (fast paths the kernel refused, the
// host's UDP counters), and the loss summed up from the direction's flows, with where it happened.
// iperf3's -u keys and the interval columns come from the flows' figures (report/udp_report.*).
struct UdpSummary {
  std::uint64_t datagram = 0;              // -l
  double rate_bps = 0;                     // asked per flow; 0 = unpaced
  UdpSpec asked;                           // the fast paths asked for
  std::vector<std::string> fallbacks;      // this side's fast paths the kernel refused
  bool host_counted = false;               // this host's UDP counters could be read
  net::UdpCounters host;                   // ... and what they moved over the test
};

// The section for `summary`, as the side adds it to a report (each direction of --bidir shares it).
std::shared_ptr<const report::Section> make_section(UdpSummary summary);

}  // namespace testio::workloads::udp
