// Request/response (echo) latency: the client keeps `depth` messages of `message_size` bytes outstanding
// on its connection and times each one from the start of its send to the last byte of its echo;
// the server echoes whatever arrives. Owner: the worker thread each stream is added to.
//
// When a connection has its thread to itself (and, on the client, one request is outstanding),
// an event loop only adds an epoll_wait to every message: such a stream is given the worker's
// engines::BlockingSignals and runs a loop of blocking send/recv on the worker thread instead, as sockperf
// and a blocking-socket client do. Otherwise it runs on the worker's io_context.
#pragma once

#include <memory>
#include <vector>

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "engines/stream_task.hpp"

namespace testio::workloads {

class RrClient final : public engines::StreamTask {
 public:
  // `payload` holds at least `message_size` bytes and outlives the stream; `messages` 0 = until the
  // deadline. Counters: bytes sent, and messages sent as calls. Latencies go to `latencies`. The
  // echoes are read into `echo_buffer` (echo_read_size(message_size) bytes, the worker's: they are
  // counted, never kept).
  RrClient(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
           std::size_t message_size, std::uint32_t depth, std::uint64_t messages, stats::LatencyHistogram& latencies,
           char* echo_buffer, engines::StreamDone on_done, const engines::BlockingSignals* blocking = nullptr);
  static std::size_t echo_read_size(std::size_t message_size) noexcept;

  void begin(const engines::TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void send_next();
  void read_next();
  void maybe_half_close();
  void finish(bool failed);
  void run_blocking();

  asio::ip::tcp::socket socket_;
  const engines::BlockingSignals* blocking_;
  asio::steady_timer deadline_timer_;
  stats::StreamCounters& counters_;
  const char* payload_;
  std::size_t message_size_;
  std::uint32_t depth_;
  std::uint64_t limit_;
  stats::LatencyHistogram& latencies_;
  std::vector<engines::Clock::time_point> sent_at_;  // ring of `depth` send times, allocated once
  char* echo_buffer_;
  std::uint64_t issued_ = 0;     // messages whose write has started
  std::uint64_t completed_ = 0;
  std::uint64_t echo_bytes_ = 0;
  bool writing_ = false;
  bool window_closed_ = false;
  bool half_closed_ = false;
  bool finished_ = false;
  engines::TestClock clock_;
  engines::StreamDone on_done_;
};

// The server's side: reads into one buffer, writes the same bytes back, until EOF.
class TcpEcho final : public engines::StreamTask {
 public:
  TcpEcho(asio::ip::tcp::socket socket, stats::StreamCounters& counters, std::size_t buffer_size, engines::StreamDone on_done,
          const engines::BlockingSignals* blocking = nullptr);
  void begin(const engines::TestClock& clock) override;
  void close() noexcept override;

 private:
  void read_next();
  void finish(bool failed);
  void run_blocking();

  asio::ip::tcp::socket socket_;
  const engines::BlockingSignals* blocking_;
  stats::StreamCounters& counters_;
  std::unique_ptr<char[]> buffer_;
  std::size_t buffer_size_;
  bool finished_ = false;
  engines::TestClock clock_;
  engines::StreamDone on_done_;
};

}  // namespace testio::workloads
