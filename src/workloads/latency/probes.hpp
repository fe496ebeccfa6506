// The latency probes' streams. The client's send one probe each interval on the test's clock
// (absolute deadlines, so a late one does not shift the rest), time each answer and log it; the
// server's answer. A probe that gets no answer is logged as lost, never as a failed stream: a
// blocked probe port is a finding (reported), and the load beside it is still measured.
// Owner: the worker each stream is added to; the lifecycle reaches one only through that worker
// (begin, end_window, close, and on the server attach()).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>

#include "engines/stream_task.hpp"
#include "stats/histogram.hpp"
#include "workloads/latency/probe_log.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::latency {

// What a probe stream is told: its pace and size, and (client) where its peer is.
struct ProbeSettings {
  std::uint64_t interval_ns = 10'000'000;
  std::size_t size = 72;                 // bytes per probe and per answer (a connect probe's: 1)
  std::uint64_t test_id = 0;
  std::uint32_t number = 0;              // the stream's number in the test (a UDP hello names it)
  asio::ip::tcp::endpoint server;
  std::array<unsigned char, 24> preamble{};
  std::int64_t clock_offset_ns = 0;      // the server's clock less this one's (UDP one-way delays)
};

// What the server saw of the probes. Written by its worker; read after the workers stopped.
struct ServerTally {
  std::uint64_t answered = 0;     // udp: probes echoed; connect: connections answered
  std::uint64_t bytes = 0;        // tcp, connect: bytes echoed
  stats::LatencyHistogram up_ns;  // udp: the one-way delay up, on the client's offset estimate
};

// Client, udp: says the flow's hello until the server's UDP port answers, then a datagram each
// interval; the echoes give round trips (less the server's own time) and one-way delays.
class UdpProber final : public engines::StreamTask {
 public:
  UdpProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log);
  void begin(const engines::TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void say_hello();
  void send_due();
  void await_datagrams();
  void take(const unsigned char* data, std::size_t size);
  void linger();
  bool all_answered() const noexcept;
  void finish();

  asio::ip::udp::socket socket_;
  asio::steady_timer timer_;
  asio::steady_timer linger_timer_;
  ProbeSettings settings_;
  ProbeLog& log_;
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
  engines::TestClock clock_;
  std::vector<unsigned char> buffer_;   // one probe, written in place
  std::vector<unsigned char> answer_;   // one echo
  std::vector<std::uint8_t> answered_;  // by sequence; sized once for the window
  std::uint64_t sent_ = 0;         // probes due so far (the next one's sequence)
  std::uint64_t first_probe_ = 0;  // the first sent, once the hello was answered
  std::uint64_t longest_ns_ = 0;   // the longest round trip so far
  std::uint64_t answered_count_ = 0;
  bool hello_answered_ = false;
  bool lingering_ = false;         // the window closed; waiting for the last echoes
  bool window_closed_ = false;
  bool finished_ = false;
};

// Server, udp: echoes each probe with its two stamps from the flow's own socket (attach()).
class UdpReflector final : public engines::StreamTask {
 public:
  UdpReflector(StreamPlace& place, ProbeSettings settings, ServerTally& tally);
  void begin(const engines::TestClock& clock) override;
  void attach(asio::ip::udp::socket socket);
  void end_window() noexcept override;  // the client is done
  void close() noexcept override;

 private:
  void await_probes();
  void finish();

  asio::ip::udp::socket socket_;
  ProbeSettings settings_;
  ServerTally& tally_;
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
  std::vector<unsigned char> buffer_;
  bool finished_ = false;
};

// Client, tcp: one connection for the test; a message each interval (or, when the last echo came
// later than that, as soon as it came), timed to the last byte of its echo.
class TcpProber final : public engines::StreamTask {
 public:
  TcpProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log);
  void begin(const engines::TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void probe();
  void schedule_next();
  void wind_down();
  void finish();

  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  ProbeSettings settings_;
  ProbeLog& log_;
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
  engines::TestClock clock_;
  std::vector<char> message_;
  std::vector<char> echo_;
  std::uint64_t next_ = 0;  // the interval the next probe is due in
  bool in_flight_ = false;
  bool window_closed_ = false;
  bool finished_ = false;
};

// Client, connect: each interval a new connection: its handshake, a byte, the byte back.
class ConnectProber final : public engines::StreamTask {
 public:
  ConnectProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log);
  void begin(const engines::TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void tick();
  void probe();
  void conclude(bool answered);
  void finish();

  asio::io_context& context_;
  std::unique_ptr<asio::ip::tcp::socket> socket_;  // the probe under way
  asio::steady_timer timer_;
  asio::steady_timer timeout_;
  ProbeSettings settings_;
  ProbeLog& log_;
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
  engines::TestClock clock_;
  std::array<unsigned char, 25> request_{};  // the preamble and one byte
  unsigned char answer_ = 0;
  std::uint64_t next_ = 0;
  ProbeRecord current_;
  bool window_closed_ = false;
  bool finished_ = false;
};

// Server, tcp and connect: echoes what each connection it is given sends until EOF. A kept
// connection is one; connect probes come one after another (a few at once at most).
class ProbeEcho final : public engines::StreamTask {
 public:
  ProbeEcho(StreamPlace& place, std::size_t buffer_size, ServerTally& tally, bool one_connection);
  void begin(const engines::TestClock&) override {}
  void attach(asio::ip::tcp::socket socket);
  void end_window() noexcept override;  // the client is done
  void close() noexcept override;

 private:
  struct Connection {
    asio::ip::tcp::socket socket;
    std::vector<char> buffer;
  };
  void echo(const std::shared_ptr<Connection>& connection);
  void finish();

  std::size_t buffer_size_;
  ServerTally& tally_;
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
  bool one_connection_;
  std::vector<std::weak_ptr<Connection>> open_;
  bool window_closed_ = false;
  bool finished_ = false;
};

}  // namespace testio::workloads::latency
