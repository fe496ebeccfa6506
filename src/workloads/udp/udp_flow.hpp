// One UDP flow's stream on its worker: the socket, the client's hello until the server answers,
// and then the datagrams, sent (UdpSender) or received and accounted (UdpReceiver). Owner: its
// worker; the lifecycle reaches it only through the worker (begin, end_window, close, and on the
// server attach(), posted when the flow's hello arrived).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/socket.h>

#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include "engines/stream_task.hpp"
#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "stats/udp_sequence.hpp"
#include "workloads/udp/datagram.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {

// What a flow is asked to do: one side's view of the spec for this flow.
struct FlowSettings {
  std::size_t datagram = 1448;  // -l: bytes of UDP payload per datagram, header included
  std::uint32_t batch = 16;     // messages per sendmmsg/recvmmsg
  bool gso = true;
  bool gro = true;
  bool connected = true;        // the client's socket connect()s (a server's always does)
  std::uint64_t window = 0;     // -w: SO_SNDBUF/SO_RCVBUF
  std::uint8_t tos = 0;         // -S: the TOS byte of its datagrams
  bool dont_fragment = false;   // --dont-fragment: DF set, no fragments
  double rate_bps = 0;          // the sender's pace; 0 = as fast as it can
  std::uint64_t quota = 0;      // -n: the bytes this flow sends; 0 = until the window ends
  std::uint64_t test_id = 0;
  std::uint32_t stream = 0;     // the flow's number in the test
  Wire wire = Wire::testio;     // iperf3's: no hello, no end marker (its session sets the socket up)
  // Client: the server's clock less this one's. Its senders stamp the server's time, its receivers
  // take it off, so every one-way delay is on the server's clock (iperf3's stamps are monotonic:
  // no delay is measured on its wire).
  std::int64_t clock_offset_ns = 0;
};

// A side's record of the fast paths its flows had to give up, each said once. Flows write it on
// their workers; the side reads it once they have ended.
struct FastPaths {
  std::atomic<bool> gso_refused{false};
  std::atomic<bool> gro_refused{false};
  std::atomic<bool> drops_unknown{false};
  std::atomic<bool> fragmented{false};  // -l is more than one packet of the path carries
  // True the first time `flag` is raised, when the warning is to be said.
  static bool first(std::atomic<bool>& flag) noexcept { return !flag.exchange(true, std::memory_order_relaxed); }
};

class UdpFlow : public engines::StreamTask {
 public:
  UdpFlow(StreamPlace& place, FlowSettings settings, FastPaths& paths);
  // Client: opens the socket toward the server and says hello until it answers; server: waits
  // for attach(). Either way a watchdog ends a flow whose peer never comes.
  void begin(const engines::TestClock& clock) override;
  // Server, on the worker: the flow's socket, connected to the client that said hello.
  void attach(asio::ip::udp::socket socket);
  // The sender's window ends now; a receiver's peer is done. A server flow whose hello never
  // came ends here (failed).
  void end_window() noexcept final;
  void close() noexcept override;

 protected:
  // The data phase, once the socket is ready (and the hello answered).
  virtual void run() = 0;
  // A datagram that arrived during the hello: the server's answer or, from a sending server,
  // already data. True when it was data the receiver counted (its answer is then implied).
  virtual bool take_early(const unsigned char*, std::size_t) { return false; }
  // What end_window() means to a running flow, and the watchdog's deadline (by default: finish).
  virtual void window_ended() noexcept {}
  virtual void overdue();
  bool prepare_socket();
  // Client: says once when a datagram of -l bytes needs IP fragments on the path to the server.
  void check_path_mtu();
  // Marks the stream ended and tells the lifecycle; once.
  void finish(bool failed);
  bool finished() const noexcept { return finished_; }
  int fd() noexcept { return socket_.native_handle(); }
  bool client() const noexcept { return client_; }
  double seconds_since_start() const noexcept;

  asio::io_context& context_;
  asio::ip::udp::socket socket_;
  asio::ip::udp::endpoint server_;  // client: where the flow goes
  stats::StreamCounters& counters_;
  FlowSettings settings_;
  FastPaths& paths_;
  engines::TestClock clock_;
  asio::steady_timer timer_;        // the sender's pace, the receiver's quiet; the hello's retries
  bool closed_ = false;
  bool window_closed_ = false;

 private:
  void say_hello(unsigned tries_left);
  void await_answer(unsigned tries_left);
  void watch_for_peer();

  engines::StreamDone done_;
  bool client_ = false;
  bool finished_ = false;
  bool running_ = false;
  bool begun_ = false;
  bool attached_ = false;
  asio::steady_timer watchdog_;  // ends a flow whose peer never arrived or went silent
};

// Sends the flow's datagrams: paced to absolute deadlines, several per call (GSO, sendmmsg), each
// with its header; then the end marker.
class UdpSender final : public UdpFlow {
 public:
  UdpSender(StreamPlace& place, FlowSettings settings, FastPaths& paths);

 private:
  void run() override;
  void send_some();
  bool retry_later(int error);
  void count_sent(std::size_t messages);
  std::size_t lay_out(std::uint64_t datagrams, double now_s);
  void give_up_gso();
  void send_end_markers(unsigned left);
  std::size_t size_of(std::uint64_t sequence) const noexcept;
  std::uint64_t due_by(engines::Clock::time_point now) const noexcept;
  engines::Clock::time_point due_time(std::uint64_t datagram) const noexcept;

  std::uint64_t total_datagrams_ = 0;  // -n: how many the quota takes; 0 = timed
  std::uint32_t segments_ = 1;         // datagrams per message (GSO)
  std::uint64_t sent_ = 0;
  double datagram_ns_ = 0;             // the pace: nanoseconds per datagram; 0 = unpaced
  std::uint64_t quantum_ = 1;          // datagrams a paced sender waits to have due before it sends
  std::uint64_t burst_ = 1;            // ... and the most it sends at once
  double offset_s_ = 0;                // added to this clock's time in each header (testio's wire)
  engines::Clock::time_point paced_from_;
  std::vector<unsigned char> buffer_;  // batch * segments datagrams, written in place
  std::vector<iovec> iovecs_;
  std::vector<mmsghdr> messages_;
};

// Bytes per receive buffer for these settings: what the side asks its worker's scratch for.
std::size_t receive_slot(const FlowSettings& settings) noexcept;

// Receives the flow's datagrams into its worker's buffer and accounts every one: sequence, loss,
// jitter, the socket's own drops. Ends at the end marker (or a quiet spell after it), when the
// server is told the client is done, or at a deadline if the sender vanished.
class UdpReceiver final : public UdpFlow {
 public:
  UdpReceiver(StreamPlace& place, FlowSettings settings, FastPaths& paths, unsigned char* scratch);

 private:
  void run() override;
  void window_ended() noexcept override;
  void overdue() override { end_flow(); }
  bool take_early(const unsigned char* data, std::size_t size) override;
  void wait_readable();
  void drain();
  void take_message(const mmsghdr& message, double now_s);
  void take_datagram(const unsigned char* data, std::size_t size, double now_s);
  void publish();
  void check_quiet();
  void end_flow();

  std::size_t slot_;                   // bytes per receive buffer: 64 KiB under GRO, else a datagram
  unsigned char* scratch_;             // the worker's: batch * slot_ bytes
  std::vector<iovec> iovecs_;
  std::vector<mmsghdr> messages_;
  std::vector<unsigned char> control_; // each message's control data
  stats::UdpSequence sequence_;
  stats::LatencyHistogram delays_;     // one-way, ns; a negative one (clock error) counts as 0
  double offset_s_ = 0;                // the server's clock less this one's (client, testio's wire)
  std::uint64_t drops_ = 0;            // the socket's own count (SO_RXQ_OVFL)
  std::uint64_t strays_ = 0;
  std::uint64_t new_bytes_ = 0;        // of distinct datagrams, not yet in the counters
  std::optional<std::uint64_t> sent_;  // from the end marker
  engines::Clock::time_point last_arrival_;
};

}  // namespace testio::workloads::udp
