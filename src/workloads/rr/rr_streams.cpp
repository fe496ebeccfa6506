// Request/response's data path: the streams and the two sides that make them.
//
// Request/response (echo) latency: the client keeps `depth` messages of `message_size` bytes outstanding
// on its connection and times each one from the start of its send to the last byte of its echo;
// the server echoes whatever arrives. Owner: the worker thread each stream is added to.
//
// When a connection has its thread to itself (and, on the client, one request is outstanding),
// an event loop only adds an epoll_wait to every message: such a stream is given the worker's
// engines::BlockingSignals and runs a loop of blocking send/recv on the worker thread instead, as sockperf
// and a blocking-socket client do. Otherwise it runs on the worker's io_context.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <asio/error.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

#include "engines/worker.hpp"
#include "engines/blocking_socket.hpp"
#include "engines/stream_task.hpp"
#include "stats/counters.hpp"
#include "util/pattern.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/rr/rr.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rr {
namespace {

using asio::ip::tcp;

constexpr std::size_t kEchoReadSize = 256 * 1024;

// False when the connection failed or the worker is aborting.
bool send_all(int fd, const char* data, std::size_t size, const engines::BlockingSignals& signals) noexcept {
  while (size > 0) {
    ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (engines::timed_out(sent)) {
      if (signals.aborted.load(std::memory_order_relaxed)) return false;
      continue;
    }
    if (sent < 0) return false;
    data += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

// Bytes read; 0 at EOF; -1 when the connection failed or the worker is aborting.
ssize_t receive_some(int fd, char* buffer, std::size_t size, const engines::BlockingSignals& signals) noexcept {
  for (;;) {
    ssize_t received = ::recv(fd, buffer, size, 0);
    if (!engines::timed_out(received)) return received < 0 ? -1 : received;
    if (signals.aborted.load(std::memory_order_relaxed)) return -1;
  }
}

std::uint64_t nanoseconds(engines::Clock::duration duration) noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count());
}

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

RrClient::RrClient(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
                   std::size_t message_size, std::uint32_t depth, std::uint64_t messages,
                   stats::LatencyHistogram& latencies, char* echo_buffer, engines::StreamDone on_done,
                   const engines::BlockingSignals* blocking)
    : socket_(std::move(socket)),
      blocking_(depth <= 1 ? blocking : nullptr),
      deadline_timer_(socket_.get_executor()),
      counters_(counters),
      payload_(payload),
      message_size_(message_size),
      depth_(std::max(1u, depth)),
      limit_(messages),
      latencies_(latencies),
      sent_at_(depth_),
      echo_buffer_(echo_buffer),
      on_done_(std::move(on_done)) {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);  // a request must not wait for Nagle
}

std::size_t RrClient::echo_read_size(std::size_t message_size) noexcept {
  return std::min(message_size, kEchoReadSize);
}

void RrClient::begin(const engines::TestClock& clock) {
  clock_ = clock;
  if (blocking_) {
    run_blocking();
    return;
  }
  if (clock.deadline != engines::Clock::time_point::max()) {
    deadline_timer_.expires_at(clock.deadline);
    deadline_timer_.async_wait([this](const asio::error_code& error) {
      if (!error) end_window();
    });
  }
  read_next();
  send_next();
}

void RrClient::send_next() {
  if (finished_ || writing_ || window_closed_ || (limit_ && issued_ >= limit_) || issued_ - completed_ >= depth_) {
    maybe_half_close();
    return;
  }
  // Issued (and timed) when its write starts: its echo may come back before the write's
  // completion handler runs.
  writing_ = true;
  sent_at_[issued_ % depth_] = engines::Clock::now();
  ++issued_;
  asio::async_write(socket_, asio::buffer(payload_, message_size_), [this](const asio::error_code& error, std::size_t written) {
    writing_ = false;
    if (finished_) return;
    if (error) {
      finish(true);
      return;
    }
    counters_.record(written, clock_.since_start(engines::Clock::now()));
    send_next();
  });
}

void RrClient::read_next() {
  socket_.async_read_some(asio::buffer(echo_buffer_, echo_read_size(message_size_)),
                          [this](const asio::error_code& error, std::size_t received) {
                            if (finished_) return;
                            if (error) {
                              // EOF after our half-close with every echo in: a clean end.
                              finish(!(error == asio::error::eof && half_closed_ && completed_ == issued_));
                              return;
                            }
                            engines::Clock::time_point now = engines::Clock::now();
                            echo_bytes_ += received;
                            while (echo_bytes_ >= (completed_ + 1) * message_size_ && completed_ < issued_) {
                              latencies_.record(nanoseconds(now - sent_at_[completed_ % depth_]));
                              ++completed_;
                            }
                            send_next();
                            read_next();
                          });
}

void RrClient::run_blocking() {
  const int fd = socket_.native_handle();
  engines::make_blocking(fd);
  const engines::BlockingSignals& signals = *blocking_;
  char* echo = echo_buffer_;
  const std::size_t echo_size = echo_read_size(message_size_);
  bool failed = false;
  while (!signals.window_closed.load(std::memory_order_relaxed) && !(limit_ && issued_ >= limit_)) {
    const engines::Clock::time_point sent_at = engines::Clock::now();
    if (sent_at >= clock_.deadline) break;
    ++issued_;
    if (!send_all(fd, payload_, message_size_, signals)) {
      failed = true;
      break;
    }
    counters_.record(message_size_, clock_.since_start(engines::Clock::now()));
    std::size_t echoed = 0;
    while (echoed < message_size_) {
      ssize_t received = receive_some(fd, echo, std::min(echo_size, message_size_ - echoed), signals);
      if (received <= 0) break;
      echoed += static_cast<std::size_t>(received);
    }
    if (echoed < message_size_) {
      failed = true;
      break;
    }
    latencies_.record(nanoseconds(engines::Clock::now() - sent_at));
    ++completed_;
  }
  // Half-close, then the server's EOF says it echoed everything.
  half_closed_ = true;
  ::shutdown(fd, SHUT_WR);
  if (!failed) failed = receive_some(fd, echo, echo_size, signals) != 0;
  finish(failed);
}

void RrClient::maybe_half_close() {
  bool done_sending = window_closed_ || (limit_ && issued_ >= limit_);
  if (half_closed_ || writing_ || !done_sending || completed_ != issued_) return;
  half_closed_ = true;
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

void RrClient::end_window() noexcept {
  if (finished_) return;
  window_closed_ = true;
  maybe_half_close();
}

void RrClient::finish(bool failed) {
  finished_ = true;
  deadline_timer_.cancel();
  engines::report_finished(counters_, failed, on_done_);
}

void RrClient::close() noexcept {
  finished_ = true;
  deadline_timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

TcpEcho::TcpEcho(asio::ip::tcp::socket socket, stats::StreamCounters& counters, std::size_t buffer_size,
                 engines::StreamDone on_done, const engines::BlockingSignals* blocking)
    : socket_(std::move(socket)),
      blocking_(blocking),
      counters_(counters),
      buffer_(std::make_unique_for_overwrite<char[]>(buffer_size)),
      buffer_size_(buffer_size),
      on_done_(std::move(on_done)) {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

void TcpEcho::begin(const engines::TestClock& clock) {
  clock_ = clock;
  if (blocking_)
    run_blocking();
  else
    read_next();
}

void TcpEcho::run_blocking() {
  const int fd = socket_.native_handle();
  engines::make_blocking(fd);
  for (;;) {
    ssize_t received = receive_some(fd, buffer_.get(), buffer_size_, *blocking_);
    if (received <= 0) {
      finish(received < 0);
      return;
    }
    counters_.record(static_cast<std::size_t>(received), clock_.since_start(engines::Clock::now()));
    if (!send_all(fd, buffer_.get(), static_cast<std::size_t>(received), *blocking_)) {
      finish(true);
      return;
    }
  }
}

void TcpEcho::read_next() {
  socket_.async_read_some(asio::buffer(buffer_.get(), buffer_size_), [this](const asio::error_code& error,
                                                                            std::size_t received) {
    if (finished_) return;
    if (error) {
      finish(error != asio::error::eof);
      return;
    }
    counters_.record(received, clock_.since_start(engines::Clock::now()));
    asio::async_write(socket_, asio::buffer(buffer_.get(), received), [this](const asio::error_code& write_error,
                                                                             std::size_t) {
      if (finished_) return;
      if (write_error) {
        finish(true);
        return;
      }
      read_next();
    });
  });
}

void TcpEcho::finish(bool failed) {
  finished_ = true;
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);  // the client reads to EOF
  engines::report_finished(counters_, failed, on_done_);
}

void TcpEcho::close() noexcept {
  finished_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
}

// An echo writes back whatever one read returned, so its buffer is the connection's own: room for
// the messages a client keeps outstanding, at least a few pages, at most 256 KiB.
std::size_t echo_buffer_size(const RrSpec& rr) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(rr.message_size * rr.depth, 4096, 256 * 1024));
}

// A connection alone on its worker blocks in send/recv rather than paying an epoll_wait per message.
const engines::BlockingSignals* blocking_if_alone(const StreamPlace& place, std::uint32_t connections) {
  return connections <= place.workers ? &place.worker.signals() : nullptr;
}

void describe_rr(const RrSpec& rr, report::StartInfo& start) {
  start.extent = rr_extent(rr);
  start.call_size = rr.message_size;
  start.manner = "request/response of " + util::format_size(rr.message_size) + ", depth " + std::to_string(rr.depth);
}

// Owner: the lifecycle (control thread); each histogram is written by its connection's worker
// and merged once the workers have stopped.
class RrClientSide final : public TestSide {
 public:
  explicit RrClientSide(const spec::TestSpec& spec)
      : connections_(spec.connections),
        rr_(part_of<RrSpec>(spec)),
        latencies_(std::make_unique<stats::LatencyHistogram[]>(spec.connections)) {}

  DirectionLayout layout() const override { return {connections_, 0}; }
  void describe_start(report::StartInfo& start) const override { describe_rr(rr_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket> socket) override {
    if (payloads_.size() <= place.worker.index()) payloads_.resize(place.worker.index() + 1);
    util::PageBuffer& payload = payloads_[place.worker.index()];
    if (!payload) payload = util::make_pattern(rr_.message_size);
    return std::make_unique<RrClient>(std::move(*socket), place.counters, payload.data(), rr_.message_size, rr_.depth,
                                      rr_.messages, latencies_[place.index],
                                      place.worker.scratch(RrClient::echo_read_size(rr_.message_size)),
                                      std::move(place.done), blocking_if_alone(place, connections_));
  }

  void add_to_report(report::TestReport& report) const override {
    stats::LatencyHistogram all;
    for (std::uint32_t i = 0; i < connections_; ++i) all.merge(latencies_[i]);
    report.sections.push_back(
        std::make_shared<RrSection>(summarize_rr(all, rr_.message_size, rr_.depth, report.local().wall_s)));
  }

 private:
  std::uint32_t connections_;
  RrSpec rr_;
  std::unique_ptr<stats::LatencyHistogram[]> latencies_;  // one per connection
  std::vector<util::PageBuffer> payloads_;                // by worker index
};

class EchoSide final : public TestSide {
 public:
  explicit EchoSide(const spec::TestSpec& spec)
      : rr_(part_of<RrSpec>(spec)), connections_(spec.connections), buffer_size_(echo_buffer_size(rr_)) {}

  DirectionLayout layout() const override { return {connections_, 0}; }
  void describe_start(report::StartInfo& start) const override { describe_rr(rr_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket> socket) override {
    return std::make_unique<TcpEcho>(std::move(*socket), place.counters, buffer_size_, std::move(place.done),
                                     blocking_if_alone(place, connections_));
  }

 private:
  RrSpec rr_;
  std::uint32_t connections_;
  std::size_t buffer_size_;
};

}  // namespace

std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec) { return std::make_unique<RrClientSide>(spec); }

std::unique_ptr<TestSide> echo_side(const spec::TestSpec& spec) { return std::make_unique<EchoSide>(spec); }

}  // namespace testio::workloads::rr
