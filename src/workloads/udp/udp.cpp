// The UDP workload: its rules, and each side's flows. A flow's client socket says hello to the
// server's UDP port once the test has started; the server gives the flow a socket of its own
// (session/udp_door.*) and routes it here. Senders and receivers are as a bulk test's: forward,
// -R, --bidir.
#include "workloads/udp/udp.hpp"

#include "workloads/udp/udp_section.hpp"

#include "stats/summary.hpp"
#include "util/log.hpp"
#include "workloads/part.hpp"
#include "workloads/udp/datagram.hpp"
#include "workloads/udp/udp_flow.hpp"

namespace testio::workloads::udp {
namespace {

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

constexpr std::uint32_t kMaxBatch = 1024;

// One side's flows. Owner: the lifecycle, on the control thread; the flows belong to their workers.
class UdpSide final : public TestSide {
 public:
  UdpSide(Side side, const spec::TestSpec& spec, Wire wire = Wire::testio)
      : side_(side), spec_(spec), udp_(part_of<UdpSpec>(spec)), wire_(wire), layout_(DirectionLayout::of(spec.direction, spec.connections)),
        flows_(layout_.total(), nullptr), host_at_start_(net::read_udp_counters()) {}

  DirectionLayout layout() const override { return layout_; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { start.datagrams = true; }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<asio::ip::tcp::socket>) override {
    if (place.server.address().is_v4() && spec_.buffer > kMaxPayloadV4)
      throw std::runtime_error("-l " + std::to_string(spec_.buffer) +
                               " is more than a UDP datagram over IPv4 holds: at most 65507 bytes");
    const FlowSettings settings = settings_for(place);
    std::unique_ptr<UdpFlow> flow;
    if (layout_.sends_on(side_, place.index)) {
      flow = std::make_unique<UdpSender>(place, settings, paths_);
    } else {
      auto* scratch = reinterpret_cast<unsigned char*>(place.worker.scratch(settings.batch * receive_slot(settings)));
      flow = std::make_unique<UdpReceiver>(place, settings, paths_, scratch);
    }
    flows_[place.index] = flow.get();
    return flow;
  }

  std::string route_flow(std::uint32_t slot, asio::ip::udp::socket socket, engines::Worker& worker) override {
    if (slot >= flows_.size() || !flows_[slot])
      return "flow " + std::to_string(slot) + " is beyond the test's " + std::to_string(flows_.size()) + " flows";
    auto owned = std::make_shared<asio::ip::udp::socket>(std::move(socket));
    worker.post([flow = flows_[slot], owned] { flow->attach(std::move(*owned)); });
    return {};
  }

  void add_to_report(report::TestReport& report) const override {
    UdpSummary udp;
    udp.datagram = spec_.buffer;
    udp.rate_bps = spec_.rate_bps;
    udp.asked = udp_;
    if (paths_.gso_refused) udp.fallbacks.push_back("gso");
    if (paths_.gro_refused) udp.fallbacks.push_back("gro");
    if (paths_.drops_unknown) udp.fallbacks.push_back("socket_drops");
    const std::optional<net::UdpCounters> now = net::read_udp_counters();
    udp.host_counted = host_at_start_ && now;
    if (udp.host_counted) udp.host = *now - *host_at_start_;
    // Each direction of --bidir tells the same settings beside its own flows' loss.
    auto section = std::make_shared<const UdpSection>(std::move(udp));
    report.sections.push_back(section);
    if (report.bidir_reverse) {
      auto reverse = std::make_shared<report::TestReport>(*report.bidir_reverse);
      reverse->sections.push_back(section);
      report.bidir_reverse = std::move(reverse);
    }
  }

 private:
  FlowSettings settings_for(const StreamPlace& place) const {
    const bool forward = layout_.is_forward(place.index);
    FlowSettings settings;
    settings.datagram = static_cast<std::size_t>(spec_.buffer);
    settings.batch = udp_.batch;
    settings.gso = udp_.gso;
    settings.gro = udp_.gro;
    settings.connected = udp_.connected || side_ == Side::server || wire_ != Wire::testio;
    settings.window = spec_.window;
    settings.tos = static_cast<std::uint8_t>(spec_.tos);
    settings.dont_fragment = udp_.dont_fragment;
    settings.rate_bps = spec_.rate_bps;
    settings.quota = stats::share_of_total(spec_.total_bytes, layout_.count(forward), layout_.index_in_direction(place.index));
    settings.test_id = place.test_id;
    settings.stream = place.number;
    settings.wire = wire_;
    settings.clock_offset_ns = side_ == Side::client ? place.clock_offset_ns : 0;
    return settings;
  }

  Side side_;
  spec::TestSpec spec_;
  UdpSpec udp_;
  Wire wire_;
  DirectionLayout layout_;
  FastPaths paths_;
  std::vector<UdpFlow*> flows_;  // by index; owned by their workers, which outlive the routing
  std::optional<net::UdpCounters> host_at_start_;
};

class Udp final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    if (!spec.timed() && spec.total_bytes == 0) refuse("-t must be more than 0 seconds");
    if (spec.timed() && spec.total_bytes) refuse("-t and -n exclude each other: give a time or a byte count");
    if (spec.buffer < kTestioHeader)
      refuse("-l must be at least 32 bytes with -u: each datagram carries testio's 32-byte header");
    if (spec.buffer > kMaxPayloadV6)
      refuse("-l " + std::to_string(spec.buffer) +
             " is more than a UDP datagram holds: at most 65507 bytes over IPv4, 65527 over IPv6");
    if (spec.total_bytes && spec.total_bytes / spec.connections < kTestioHeader)
      refuse("-n gives each flow fewer than 32 bytes, less than one datagram's header");
    const std::uint32_t batch = part_of<UdpSpec>(spec).batch;
    if (batch == 0 || batch > kMaxBatch) refuse("--batch must be from 1 to 1024");
    if (spec.engine != spec::Engine::asio)
      refuse("-u runs on the asio engine; --engine threads and uring carry TCP streams");
    if (spec.hash != util::HashKind::none) refuse("-F and --hash go with TCP streams, not -u");
    if (spec.send_mode != spec::SendMode::send || spec.recv_mode != spec::RecvMode::recv_into)
      refuse("--recv-mode and --send-mode apply to TCP streams; -u has --no-gso, --no-gro and --batch");
    if (spec.fq_rate_bps > 0 || spec.rx_follow)
      refuse("--fq-rate and --rx-affinity apply to TCP streams, not -u");
  }

  bool datagrams() const override { return true; }
  bool takes_setting(std::string_view name) const override { return part_has<UdpSpec>(name); }

  std::unique_ptr<TestSide> client(const config::Config&, spec::TestSpec& spec) const override {
    return std::make_unique<UdpSide>(Side::client, spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources&) const override {
    return std::make_unique<UdpSide>(Side::server, spec);
  }
};

}  // namespace

const Workload& workload() {
  static const Udp udp;
  return udp;
}

std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire) {
  return std::make_unique<UdpSide>(side, spec, wire);
}

}  // namespace testio::workloads::udp
