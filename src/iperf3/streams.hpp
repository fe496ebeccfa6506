// The data connections of one iperf3 test on this side: the bulk workload's senders and receivers
// on testio's workers (session::TestStreams), each direction measured apart, as a testio test's.
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
#include <asio/ip/udp.hpp>

#include "control/protocol.hpp"
#include "iperf3/messages.hpp"
#include "iperf3/results.hpp"
#include "report/reporter.hpp"
#include "session/test_streams.hpp"
#include "workloads/udp/datagram.hpp"
#include "workloads/workload.hpp"

namespace testio::iperf3 {

// What the server applies to the sockets an iperf3 client opened (the client sets its own before
// it connects): each refusal is a warning, as iperf3's own server goes on with the default.
struct SocketOptions {
  std::uint64_t window = 0;  // SO_SNDBUF/SO_RCVBUF; 0 = leave as it is
  bool nodelay = false;
  std::string congestion;
};

// Bytes sent on `send_fds` (TCP sockets) that the peer's kernel has not yet acknowledged
// (SIOCOUTQ): 0 once all of it sits in the peer's receive buffers.
std::uint64_t unacknowledged(const std::vector<int>& send_fds) noexcept;

class DataStreams {
 public:
  // `sockets` in the order the client opened them (a bidirectional client: its sending streams
  // first); `spec` says how many each way and how this side's streams send and read.
  DataStreams(asio::any_io_executor control, std::vector<asio::ip::tcp::socket> sockets, workloads::Side local,
              const spec::TestSpec& spec, const SocketOptions& options = {});
  // -u: `sockets` connected to their peers by iperf3's UDP handshake, in the same order; `wire`:
  // the datagrams' header (iperf3's 32- or 64-bit counters).
  DataStreams(asio::any_io_executor control, std::vector<asio::ip::udp::socket> sockets, workloads::Side local,
              const spec::TestSpec& spec, workloads::udp::Wire wire, const SocketOptions& options = {});
  ~DataStreams();

  bool udp() const noexcept { return udp_; }
  // The workload's part of the start and of the report (UDP: its fast paths and the host's counters).
  void describe_start(report::StartInfo& start) const { side_->describe_start(start); }
  void add_to_report(report::TestReport& report) const { side_->add_to_report(report); }

  // Socket options that failed to apply, one sentence each (a warning, not a failure).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  bool sends_any() const noexcept { return layout().count(sending_forward()) > 0; }
  bool receives_any() const noexcept { return layout().count(!sending_forward()) > 0; }

  // The direction this side sends (`live_sends`) or reads has its intervals shown as they close.
  void show_live(report::Reporter& reporter, bool live_sends);
  void begin(const engines::TestClock& clock);
  asio::awaitable<void> sample() { return streams_.measurement().sample(); }
  // Ends the senders' window now (the first call counts): their figures then run to this moment
  // even when a sender's last write completed earlier, as iperf3 times its streams.
  void end_window();
  engines::CompletionLatch& senders_done() noexcept { return streams_.done(sending_forward()); }
  engines::CompletionLatch& receivers_done() noexcept { return streams_.done(!sending_forward()); }
  // The test's connections this side sends on (true) or reads (false), in order.
  std::vector<std::uint32_t> connections(bool sending) const {
    return layout().connections(sending ? sending_forward() : !sending_forward());
  }
  bool receives(std::uint32_t connection) const noexcept {
    return connection < layout().total() && !layout().sends_on(local_, connection);
  }
  // Bytes received so far on connection `connection` (0 if this side sends on it).
  std::uint64_t received(std::uint32_t connection) const noexcept;
  std::uint64_t received_total() const noexcept;
  // Bytes this side's senders have handed to the kernel so far.
  std::uint64_t sent_total() const noexcept;
  // Bytes this side sent that the peer's kernel has not yet acknowledged (SIOCOUTQ), over every
  // sending stream: 0 once all of it sits in the peer's receive buffers.
  std::uint64_t unacknowledged() const noexcept { return iperf3::unacknowledged(send_fds_); }

  // Closes the last intervals; call once, after the streams ended (or were given up on). A stream
  // this side reads that has not seen EOF still ended cleanly if it counted every byte the peer
  // says it sent (`peer_sent`, may be null): an iperf3 client closes only after the results.
  void finish(const Results* peer_sent);
  const DirectionResults& sent() const noexcept { return sent_; }
  const DirectionResults& received() const noexcept { return received_; }
  // This side's results as iperf3 exchanges them: every connection by its iperf3 id.
  Results results() const { return results_of(sent_, received_, layout().total(), udp_); }
  void stop() noexcept { streams_.stop(); }

 private:
  const workloads::DirectionLayout& layout() const noexcept { return streams_.layout(); }
  // The direction this side sends on: forward (client to server) for the client.
  bool sending_forward() const noexcept { return local_ == workloads::Side::client; }

  workloads::Side local_;
  bool udp_ = false;
  std::vector<std::string> warnings_;
  std::unique_ptr<workloads::TestSide> side_;
  session::TestStreams streams_;
  std::vector<int> send_fds_;  // open until stop(): the streams keep their sockets
  DirectionResults sent_, received_;
  engines::TestClock clock_;
  std::optional<double> window_end_s_;
};

}  // namespace testio::iperf3
