#include "iperf3/streams.hpp"

#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <tuple>

#include "net/socket_options.hpp"

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

}  // namespace

DataStreams::DataStreams(asio::any_io_executor control, std::vector<tcp::socket> sockets, workloads::Side local,
                         const spec::TestSpec& spec, const SocketOptions& options)
    : local_(local),
      side_(make_side(local, spec, std::nullopt)),
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
      side_(make_side(local, spec, wire)),
      streams_(control, side_->layout(),
               spec::effective_threads(spec.threads, static_cast<std::uint32_t>(sockets.size())), {}, spec) {
  for (std::uint32_t i = 0; i < sockets.size(); ++i) {
    if (options.window) {
      std::string clamped = net::clamp_warning(net::set_socket_buffers(sockets[i].native_handle(), options.window));
      if (!clamped.empty() && warnings_.empty()) warnings_.push_back(clamped);
    }
    streams_.add(*side_, i, std::nullopt);
    std::string refused = streams_.route_flow(*side_, i, std::move(sockets[i]));
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

std::uint64_t unacknowledged(const std::vector<int>& send_fds) noexcept {
  std::uint64_t total = 0;
  for (int fd : send_fds) {
    int queued = 0;
    if (ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) total += static_cast<std::uint64_t>(queued);
  }
  return total;
}

void DataStreams::finish(const Results* peer_sent) {
  std::tie(sent_, received_) = by_direction(streams_.measurement().finish(local_), layout(), local_, window_end_s_);
  if (!receives_any() || !peer_sent) return;
  for (const StreamResult& stream : peer_sent->streams) {
    std::optional<std::uint32_t> connection = connection_of(stream.id);
    if (!connection || !receives(*connection)) continue;
    stats::StreamFigures& figures = received_.side.streams[layout().index_in_direction(*connection)];
    // The peer leaves its omitted bytes out; this side's totals still hold them.
    if (figures.bytes >= stream.bytes) figures.failed = false;
  }
}

}  // namespace testio::iperf3
