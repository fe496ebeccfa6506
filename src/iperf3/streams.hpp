// The data connections of one iperf3 test on this side, run by the engine's workers: TcpSender on
// the streams this side sends on, TcpReceiver on the ones it reads, each direction measured apart.
// Owner: the control thread; the workers only run the streams.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "control/protocol.hpp"
#include "engine/completion_latch.hpp"
#include "engine/measurement.hpp"
#include "engine/worker_pool.hpp"
#include "iperf3/messages.hpp"
#include "report/reporter.hpp"

namespace testio::iperf3 {

struct StreamOptions {
  std::size_t buffer = 128 * 1024;
  std::uint64_t send_total = 0;   // a counted test: bytes this side sends in total; 0 = until told
  config::RecvMode recv_mode = config::RecvMode::recv_into;
  std::uint64_t window = 0;       // SO_SNDBUF/SO_RCVBUF to set here; 0 = leave as it is
  bool nodelay = false;
  std::string congestion;         // TCP_CONGESTION to set; empty = the system's default
  double interval_s = 1;
  double omit_s = 0;
  double window_s = 0;            // omit + time of a timed test, 0 for a counted one
  unsigned threads = 0;           // 0: min(connections, cores)
  bool rate_lowat = true;         // senders' TCP_NOTSENT_LOWAT follows the rate (--no-lowat: off); receivers never batch
};

// One direction's figures once the streams ended.
struct DirectionResults {
  bool present = false;
  control::SideResults side;
  std::vector<std::uint32_t> connections;  // which of the test's connections, in order
};

class DataStreams {
 public:
  // `sends[i]`: this side sends on connection i (connections in the order the client opened them).
  DataStreams(asio::any_io_executor control, std::vector<asio::ip::tcp::socket> sockets,
              const std::vector<bool>& sends, const StreamOptions& options);
  ~DataStreams();

  // Socket options that failed to apply, one sentence each (a warning, not a failure).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  bool sends_any() const noexcept { return !send_index_.empty(); }
  bool receives_any() const noexcept { return !receive_index_.empty(); }

  void begin(const workloads::TestClock& clock);
  // Intervals of `live` direction (true: sending) go to `reporter`; the other is kept quietly.
  asio::awaitable<void> sample(report::Reporter& reporter, bool live_sends);
  // Ends the senders' window now (the first call counts): their figures then run to this moment
  // even when a sender's last write completed earlier, as iperf3 times its streams.
  void end_window();
  engine::CompletionLatch& senders_done() noexcept { return *senders_done_; }
  engine::CompletionLatch& receivers_done() noexcept { return *receivers_done_; }
  // The test's connections this side sends on (true) or reads (false), in order.
  const std::vector<std::uint32_t>& connections(bool sending) const noexcept {
    return sending ? send_index_ : receive_index_;
  }
  bool receives(std::uint32_t connection) const noexcept {
    return connection < receive_index_of_.size() && receive_index_of_[connection].has_value();
  }
  // Bytes received so far on connection `connection` (0 if this side sends on it).
  std::uint64_t received(std::uint32_t connection) const noexcept;
  std::uint64_t received_total() const noexcept;
  // Bytes this side sent that the peer's kernel has not yet acknowledged (SIOCOUTQ), over every
  // sending stream: 0 once all of it sits in the peer's receive buffers.
  std::uint64_t unacknowledged() const noexcept;

  // Closes the last intervals; call once, after the streams ended (or were given up on). A stream
  // this side reads that has not seen EOF still ended cleanly if it counted every byte the peer
  // says it sent (`peer_sent`, may be null): an iperf3 client closes only after the results.
  void finish(report::Reporter& reporter, bool live_sends, const Results* peer_sent);
  const DirectionResults& sent() const noexcept { return sent_; }
  const DirectionResults& received() const noexcept { return received_; }
  // This side's results as iperf3 exchanges them: every connection by its iperf3 id.
  Results results() const;
  void stop() noexcept { pool_.stop(); }

 private:
  std::vector<std::string> warnings_;
  std::vector<std::optional<std::uint32_t>> send_index_of_, receive_index_of_;  // per connection
  std::vector<std::uint32_t> send_index_, receive_index_;  // connection of each measured stream
  std::vector<int> send_fds_;  // open until stop(): the streams keep their sockets
  engine::Measurement sending_, receiving_;
  std::shared_ptr<engine::CompletionLatch> senders_done_, receivers_done_;
  std::vector<std::unique_ptr<char[]>> payloads_;
  engine::WorkerPool pool_;
  DirectionResults sent_, received_;
  workloads::TestClock clock_;
  std::optional<double> window_end_s_;
};

}  // namespace testio::iperf3
