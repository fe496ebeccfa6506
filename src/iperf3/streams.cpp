#include "iperf3/streams.hpp"

#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "net/socket_options.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::iperf3 {
namespace {

using asio::ip::tcp;

void apply_options(tcp::socket& socket, const SocketOptions& options, std::vector<std::string>& warnings) {
  const int fd = socket.native_handle();
  if (options.window) {
    std::string clamped = net::clamp_warning(net::set_socket_buffers(fd, options.window));
    if (!clamped.empty() && warnings.empty()) warnings.push_back(clamped);
  }
  // iperf3's own server goes on with the default when an option is refused; so does this side.
  // (One option at a time, so a refused congestion control does not skip no-delay.)
  net::TcpTuning no_delay, congestion;
  no_delay.no_delay = options.nodelay;
  congestion.congestion = options.congestion;
  for (const net::TcpTuning& tuning : {no_delay, congestion}) {
    try {
      net::apply_tuning(fd, tuning);
    } catch (const std::runtime_error& refused) {
      if (warnings.size() < 2) warnings.push_back(std::string(refused.what()) + "; the default is used");
    }
  }
}

// No receive mark: iperf3's data ends without EOF (TEST_END goes on the control connection), so
// bytes held back for a batch would never be counted.
constexpr workloads::bulk::Options kIperf3Data{.data_end_with_eof = false};

}  // namespace

DataStreams::DataStreams(asio::any_io_executor control, std::vector<tcp::socket> sockets, workloads::Side local,
                         const spec::TestSpec& spec, const SocketOptions& options)
    : local_(local),
      side_(workloads::bulk::make_side(local, spec, kIperf3Data)),
      streams_(control, side_->layout(),
               spec::effective_threads(spec.threads, static_cast<std::uint32_t>(sockets.size())), {}, spec) {
  for (std::uint32_t i = 0; i < sockets.size(); ++i) {
    apply_options(sockets[i], options, warnings_);
    if (layout().sends_on(local_, i)) send_fds_.push_back(sockets[i].native_handle());
    streams_.add(*side_, i, std::move(sockets[i]));
  }
  streams_.start();
}

DataStreams::DataStreams(asio::any_io_executor control, std::vector<asio::ip::udp::socket> sockets,
                         workloads::Side local, const spec::TestSpec& spec, workloads::udp::Wire wire,
                         const SocketOptions& options)
    : local_(local),
      udp_(true),
      side_(workloads::udp::make_side(local, spec, wire)),
      streams_(control, side_->layout(),
               spec::effective_threads(spec.threads, static_cast<std::uint32_t>(sockets.size())), {}, spec) {
  for (std::uint32_t i = 0; i < sockets.size(); ++i) {
    if (options.window) {
      std::string clamped = net::clamp_warning(net::set_socket_buffers(sockets[i].native_handle(), options.window));
      if (!clamped.empty() && warnings_.empty()) warnings_.push_back(clamped);
    }
    streams_.add(*side_, i, std::nullopt);
    engines::Worker& worker = streams_.worker_for(i);
    const asio::ip::udp protocol = sockets[i].local_endpoint().protocol();  // before release()
    std::string refused = side_->route_flow(i, asio::ip::udp::socket(worker.context(), protocol, sockets[i].release()), worker);
    if (!refused.empty()) warnings_.push_back(refused);
  }
  streams_.start();
}

DataStreams::~DataStreams() { streams_.stop(); }

void DataStreams::show_live(report::Reporter& reporter, bool live_sends) {
  const bool forward = live_sends ? sending_forward() : !sending_forward();
  if (layout().count(forward)) streams_.measurement().of(forward).show_intervals_to(reporter);
}

void DataStreams::begin(const engines::TestClock& clock) {
  clock_ = clock;
  streams_.begin(clock);
}

void DataStreams::end_window() {
  if (!window_end_s_) window_end_s_ = static_cast<double>(clock_.since_start(engines::Clock::now())) * 1e-9;
  streams_.end_window();
}

std::uint64_t DataStreams::received(std::uint32_t connection) const noexcept {
  if (!receives(connection)) return 0;
  auto& measurement = const_cast<session::TestStreams&>(streams_).measurement();
  return measurement.counters(connection).bytes.load(std::memory_order_relaxed);
}

std::uint64_t DataStreams::received_total() const noexcept {
  std::uint64_t total = 0;
  for (std::uint32_t connection : connections(false)) total += received(connection);
  return total;
}

std::uint64_t DataStreams::sent_total() const noexcept {
  auto& measurement = const_cast<session::TestStreams&>(streams_).measurement();
  std::uint64_t total = 0;
  for (std::uint32_t connection : connections(true))
    total += measurement.counters(connection).bytes.load(std::memory_order_relaxed);
  return total;
}

std::uint64_t DataStreams::unacknowledged() const noexcept {
  std::uint64_t total = 0;
  for (int fd : send_fds_) {
    int queued = 0;
    if (ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) total += static_cast<std::uint64_t>(queued);
  }
  return total;
}

void DataStreams::finish(const Results* peer_sent) {
  control::DirectedResults figures = streams_.measurement().finish(local_);
  auto take = [&](bool forward) -> control::SideResults {
    return forward ? std::move(figures.forward) : std::move(*figures.reverse);
  };
  if (sends_any()) {
    sent_ = {true, take(sending_forward()), connections(true)};
    if (window_end_s_)
      for (stats::StreamFigures& stream : sent_.side.streams) stream.end_s = std::max(stream.end_s, *window_end_s_);
  }
  if (!receives_any()) return;
  received_ = {true, take(!sending_forward()), connections(false)};
  if (!peer_sent) return;
  for (const StreamResult& stream : peer_sent->streams) {
    std::optional<std::uint32_t> connection = connection_of(stream.id);
    if (!connection || !receives(*connection)) continue;
    stats::StreamFigures& figures = received_.side.streams[layout().index_in_direction(*connection)];
    // The peer leaves its omitted bytes out; this side's totals still hold them.
    if (figures.bytes >= stream.bytes) figures.failed = false;
  }
}
Results DataStreams::results() const {
  Results results;
  const std::size_t connections = layout().total();
  results.streams.resize(connections);
  stats::CpuTimes cpu;
  double wall_s = 0;
  for (const DirectionResults* direction : {&sent_, &received_}) {
    if (!direction->present) continue;
    const bool sending = direction == &sent_;
    // iperf3 counts from the end of -O: the omitted intervals are left out, as in the summary.
    const std::vector<stats::StreamFigures> kept = stats::excluding_omitted(direction->side.streams, direction->side.intervals);
    for (std::size_t k = 0; k < direction->connections.size(); ++k) {
      const std::uint32_t connection = direction->connections[k];
      const stats::StreamFigures& figures = kept[k];
      StreamResult& stream = results.streams[connection];
      stream.id = stream_id(connection);
      stream.bytes = figures.bytes;
      stream.start_s = figures.start_s;
      stream.end_s = figures.end_s;
      // UDP as iperf3 counts it: a sender its datagrams; a receiver its highest sequence number
      // and the gaps below it.
      stream.packets = figures.udp.datagrams + (sending ? 0 : figures.udp.lost);
      if (!sending) {
        stream.errors = figures.udp.lost;
        stream.jitter_s = figures.udp.jitter_s;
      }
      if (sending && !udp_) {
        stats::TcpSummary tcp = stats::tcp_summary(direction->side.intervals, k);
        stream.retransmits = tcp.valid ? tcp.retransmits : -1;
        if (tcp.valid) results.sender_has_retransmits = 1;
      }
    }
    // Both directions ran in one process: its CPU is counted once.
    cpu = direction->side.cpu;
    wall_s = std::max(wall_s, direction->side.wall_s);
    if (results.congestion.empty()) results.congestion = direction->side.congestion;
  }
  stats::CpuUsage usage = stats::cpu_usage(cpu, wall_s, 0);
  results.cpu_total = usage.total_percent;
  results.cpu_user = usage.user_percent;
  results.cpu_system = usage.system_percent;
  if (!sent_.present) results.sender_has_retransmits = -1;
  else if (results.sender_has_retransmits != 1) results.sender_has_retransmits = 0;
  return results;
}

}  // namespace testio::iperf3
