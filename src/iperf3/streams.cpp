#include "iperf3/streams.hpp"

#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <asio/experimental/awaitable_operators.hpp>

#include "report/null_reporter.hpp"
#include "util/pattern.hpp"
#include "net/socket_options.hpp"
#include "engine/bulk_streams.hpp"

namespace testio::iperf3 {
namespace {

using asio::ip::tcp;

std::vector<std::uint32_t> connections_where(const std::vector<bool>& sends, bool value) {
  std::vector<std::uint32_t> connections;
  for (std::uint32_t i = 0; i < sends.size(); ++i)
    if (sends[i] == value) connections.push_back(i);
  return connections;
}

void apply_options(tcp::socket& socket, const StreamOptions& options, std::vector<std::string>& warnings) {
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

DataStreams::DataStreams(asio::any_io_executor control, std::vector<tcp::socket> sockets,
                         const std::vector<bool>& sends, const StreamOptions& options)
    : send_index_of_(sockets.size()),
      receive_index_of_(sockets.size()),
      send_index_(connections_where(sends, true)),
      receive_index_(connections_where(sends, false)),
      sending_(static_cast<std::uint32_t>(send_index_.size()), options.interval_s, options.omit_s, options.window_s),
      receiving_(static_cast<std::uint32_t>(receive_index_.size()), options.interval_s, options.omit_s, options.window_s),
      senders_done_(std::make_shared<engine::CompletionLatch>(control, send_index_.size())),
      receivers_done_(std::make_shared<engine::CompletionLatch>(control, receive_index_.size())),
      pool_(config::effective_threads(options.threads, static_cast<std::uint32_t>(sockets.size()))) {
  for (unsigned i = 0; i < pool_.size(); ++i) payloads_.push_back(util::make_pattern(options.buffer));
  const auto connections = static_cast<std::uint32_t>(sockets.size());
  for (std::uint32_t i = 0; i < send_index_.size(); ++i) send_index_of_[send_index_[i]] = i;
  for (std::uint32_t i = 0; i < receive_index_.size(); ++i) receive_index_of_[receive_index_[i]] = i;
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket& socket = sockets[i];
    apply_options(socket, options, warnings_);
    engine::Worker& worker = pool_.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    if (sends[i]) {
      const std::uint32_t k = *send_index_of_[i];
      sending_.watch_socket(k, owned.native_handle());
      send_fds_.push_back(owned.native_handle());
      auto done = [latch = senders_done_] { latch->count_down(); };
      const std::uint64_t quota = stats::share_of_total(options.send_total, static_cast<std::uint32_t>(send_index_.size()), k);
      engine::SenderSpec spec;
      spec.payload = payloads_[worker.index()].get();
      spec.payload_size = spec.chunk = options.buffer;
      spec.quota = quota;
      spec.rate_lowat = options.rate_lowat;
      engine::add_sender(worker, config::Engine::asio, std::move(owned), sending_.counters(k), std::move(spec), done);
    } else {
      const std::uint32_t k = *receive_index_of_[i];
      receiving_.watch_socket(k, owned.native_handle());
      auto done = [latch = receivers_done_] { latch->count_down(); };
      // No receive mark: iperf3's data ends without EOF (TEST_END goes on the control connection),
      // so bytes held back for a batch would never be counted.
      engine::add_receiver(worker, config::Engine::asio, std::move(owned), receiving_.counters(k),
                           engine::ReceiverSpec{options.recv_mode, options.buffer, std::nullopt, false}, done);
    }
  }
  pool_.start();
}

DataStreams::~DataStreams() { pool_.stop(); }

void DataStreams::begin(const workloads::TestClock& clock) {
  clock_ = clock;
  sending_.begin(clock);
  receiving_.begin(clock);
  pool_.begin(clock);
}

asio::awaitable<void> DataStreams::sample(report::Reporter& reporter, bool live_sends) {
  using namespace asio::experimental::awaitable_operators;
  report::NullReporter quiet;  // the direction not shown live keeps its intervals
  report::Reporter& for_sending = live_sends ? reporter : quiet;
  report::Reporter& for_receiving = live_sends ? quiet : reporter;
  if (sends_any() && receives_any())
    co_await (sending_.sample(for_sending) && receiving_.sample(for_receiving));
  else if (sends_any())
    co_await sending_.sample(for_sending);
  else
    co_await receiving_.sample(for_receiving);
}

void DataStreams::end_window() {
  if (!window_end_s_) window_end_s_ = static_cast<double>(clock_.since_start(workloads::Clock::now())) * 1e-9;
  pool_.end_window();
}

std::uint64_t DataStreams::received(std::uint32_t connection) const noexcept {
  if (connection >= receive_index_of_.size() || !receive_index_of_[connection]) return 0;
  auto& counters = const_cast<engine::Measurement&>(receiving_).counters(*receive_index_of_[connection]);
  return counters.bytes.load(std::memory_order_relaxed);
}

std::uint64_t DataStreams::received_total() const noexcept {
  std::uint64_t total = 0;
  for (std::uint32_t connection : receive_index_) total += received(connection);
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

void DataStreams::finish(report::Reporter& reporter, bool live_sends, const Results* peer_sent) {
  report::NullReporter quiet;  // the direction not shown live keeps its intervals
  if (sends_any()) {
    sent_ = {true, sending_.finish(live_sends ? reporter : quiet, /*sender=*/true), send_index_};
    if (window_end_s_)
      for (stats::StreamFigures& figures : sent_.side.streams) figures.end_s = std::max(figures.end_s, *window_end_s_);
  }
  if (!receives_any()) return;
  received_ = {true, receiving_.finish(live_sends ? quiet : reporter, /*sender=*/false), receive_index_};
  if (!peer_sent) return;
  for (const StreamResult& stream : peer_sent->streams) {
    std::optional<std::uint32_t> connection = connection_of(stream.id);
    if (!connection || !receives(*connection)) continue;
    stats::StreamFigures& figures = received_.side.streams[*receive_index_of_[*connection]];
    // The peer leaves its omitted bytes out; this side's totals still hold them.
    if (figures.bytes >= stream.bytes) figures.failed = false;
  }
}

Results DataStreams::results() const {
  Results results;
  const std::size_t connections = send_index_of_.size();
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
      if (sending) {
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
