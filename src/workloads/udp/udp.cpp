// -u's options and rules: the switches of the kernel's fast paths and what a UDP test may ask.
// The datagrams' header is udp_wire.cpp's; the flows that send and read them are udp_streams.cpp's.
#include "workloads/udp/udp.hpp"

#include <arpa/inet.h>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {

using util::UsageError;

using util::UsageError;

void add_options(options::OptionTable& table) {
  // clang-format off
  table.add_options("UDP")
    ("u,udp", "UDP flows instead of TCP connections: datagrams of -l bytes (default 1448) paced to -b per flow "
              "(default 1M as iperf3; 0 = as fast as the host can), loss, jitter and the receiver's socket drops")
    ("no-gso", "Send one datagram per call instead of many in one UDP_SEGMENT send")
    ("no-gro", "Receive one datagram per call instead of UDP_GRO's coalesced buffers")
    ("batch", "Messages per sendmmsg/recvmmsg call; 1 sends and receives one message per call",
       options::value().default_value("16"), "K")
    ("no-connect", "The client's UDP sockets sendto/recvfrom instead of connect()ing to the server")
    ("dont-fragment", "Datagrams leave with DF set on both sides (IP_PMTUDISC_DO, as iperf3's): one bigger than "
       "the path's MTU fails to send instead of going in fragments")
    ("udp-counters-64bit", "With --iperf3 -u: iperf3's 64-bit datagram counters instead of its 32-bit default");
  // clang-format on
}

void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  given.udp = args.count("udp") > 0;
  given.udp_options = args.count("no-gso") || args.count("no-gro") || args.count("batch") || args.count("no-connect") ||
                       args.count("dont-fragment");
  if (given.udp) spec.workload = "udp";
  config.udp_counters_64bit = given.udp_counters_64bit = args.count("udp-counters-64bit") > 0;
  // Its settings go with its tests (typed without -u: check_options says so).
  if (!spec.is("udp") && !given.udp_options) return;
  UdpSpec udp = part_of<UdpSpec>(spec);
  if (args.count("no-gso")) udp.gso = false;
  if (args.count("no-gro")) udp.gro = false;
  if (args.count("no-connect")) udp.connected = false;
  if (args.count("dont-fragment")) udp.dont_fragment = true;
  if (auto batch = options::typed(args, "batch")) udp.batch = options::parse_u32(*batch, "--batch");
  set_part(spec, udp);
  if (!spec.is("udp") || !given.udp) return;
  // iperf3's defaults where this command line (or its profile) chose none.
  if (!given.buffer && !given.profile_buffer) spec.buffer = kDefaultDatagram;
  if (!given.rate && !given.total_rate) spec.rate_bps = kDefaultUdpRate;
}

void check_options(const config::Config& config, const options::GivenOptions& given) {
  // --udp-counters-64bit is accepted anywhere, as iperf3 accepts it: testio's own datagrams always
  // count in 64 bits, and toward an iperf3 server (--iperf3 -u) it asks for that server's.
  if (!config.spec.is("udp")) {
    if (given.udp_options)
      throw UsageError("--no-gso, --no-gro, --batch, --no-connect and --dont-fragment apply to -u tests");
    return;
  }
  if (config.role == config::Role::server && given.udp)
    throw UsageError("-u is a client option: a server takes UDP tests on its port as they are asked for");
  if (given.rr || given.transfers || given.raw) throw UsageError("-u runs UDP flows: drop --rr, --transfers and --raw");
  if (given.file || given.hash) throw UsageError("-F and --hash go with TCP streams, not -u");
  if (given.recv_mode || given.send_mode)
    throw UsageError("--recv-mode and --send-mode apply to TCP streams; -u has --no-gso, --no-gro and --batch");
  if (config.spec.fq_rate_bps > 0 || config.spread_even || config.spec.rx_follow)
    throw UsageError("--fq-rate, --spread and --rx-affinity apply to TCP streams, not -u");
  if (config.cport_first) throw UsageError("--cport applies to TCP streams; -u's flows take ports the kernel chooses");
  // An IPv4 server's datagrams hold less than IPv6 ones; a name is checked once it resolves.
  in_addr literal{};
  const bool ipv4 = given.ipv4 || ::inet_pton(AF_INET, config.host.c_str(), &literal) == 1;
  if (ipv4 && config.spec.buffer > 65507)
    throw UsageError("-l " + std::to_string(config.spec.buffer) +
                     " is more than a UDP datagram over IPv4 holds: at most 65507 bytes");
}

namespace {

[[noreturn]] void refuse_udp(const std::string& sentence) { throw spec::SpecError(sentence); }

constexpr std::uint32_t kMaxBatch = 1024;

class Udp final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    if (!spec.timed() && spec.total_bytes == 0) refuse_udp("-t must be more than 0 seconds");
    if (spec.timed() && spec.total_bytes) refuse_udp("-t and -n exclude each other: give a time or a byte count");
    if (spec.buffer < kTestioHeader)
      refuse_udp("-l must be at least 32 bytes with -u: each datagram carries testio's 32-byte header");
    if (spec.buffer > kMaxPayloadV6)
      refuse_udp("-l " + std::to_string(spec.buffer) +
             " is more than a UDP datagram holds: at most 65507 bytes over IPv4, 65527 over IPv6");
    if (spec.total_bytes && spec.total_bytes / spec.connections < kTestioHeader)
      refuse_udp("-n gives each flow fewer than 32 bytes, less than one datagram's header");
    const std::uint32_t batch = part_of<UdpSpec>(spec).batch;
    if (batch == 0 || batch > kMaxBatch) refuse_udp("--batch must be from 1 to 1024");
    if (spec.engine != spec::Engine::asio)
      refuse_udp("-u runs on the asio engine; --engine threads and uring carry TCP streams");
    if (spec.hash != util::HashKind::none) refuse_udp("-F and --hash go with TCP streams, not -u");
    if (spec.send_mode != spec::SendMode::send || spec.recv_mode != spec::RecvMode::recv_into)
      refuse_udp("--recv-mode and --send-mode apply to TCP streams; -u has --no-gso, --no-gro and --batch");
    if (spec.fq_rate_bps > 0 || spec.rx_follow)
      refuse_udp("--fq-rate and --rx-affinity apply to TCP streams, not -u");
  }

  bool datagrams() const override { return true; }
  bool takes_setting(std::string_view name) const override { return part_has<UdpSpec>(name); }

  std::unique_ptr<TestSide> client(const config::Config&, spec::TestSpec& spec) const override {
    return make_side(Side::client, spec, Wire::testio);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources& resources) const override {
    if (!resources.udp_port) throw std::runtime_error(no_udp_port_refusal());
    return make_side(Side::server, spec, Wire::testio);
  }
};

}  // namespace

const Workload& workload() {
  static const Udp udp;
  return udp;
}

}  // namespace testio::workloads::udp
