// TCP probes: the client's kept connection and its connection per probe, and the server's echo
// (probes.hpp).
#include <algorithm>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include "util/log.hpp"
#include "workloads/latency/probes.hpp"

namespace testio::workloads::latency {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;

// A probe whose answer has not come by then is lost (and a connect probe's connection closed).
constexpr auto kProbeTimeout = 2s;
// A connect probe is one connection a server accepts while others may still be closing.
constexpr std::size_t kMaxOpenProbes = 8;

std::uint64_t elapsed_ns(engines::Clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(engines::Clock::now() - since).count());
}

engines::Clock::time_point due(const engines::TestClock& clock, std::uint64_t interval_ns, std::uint64_t k) {
  return clock.start + std::chrono::nanoseconds(k * interval_ns);
}

// The interval after now: a probe whose answer came late waits for the next one rather than
// sending the ones it missed all at once.
std::uint64_t next_after_now(const engines::TestClock& clock, std::uint64_t interval_ns, std::uint64_t at_least) {
  const auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(engines::Clock::now() - clock.start).count();
  return std::max(at_least, static_cast<std::uint64_t>(std::max<std::int64_t>(since, 0)) / interval_ns + 1);
}

}  // namespace

TcpProber::TcpProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log)
    : socket_(place.worker.context()),
      timer_(place.worker.context()),
      settings_(settings),
      log_(log),
      counters_(place.counters),
      done_(std::move(place.done)),
      message_(settings.size, 't'),
      echo_(settings.size) {}

void TcpProber::begin(const engines::TestClock& clock) {
  clock_ = clock;
  socket_.async_connect(settings_.server, [this](const asio::error_code& error) {
    if (finished_) return;
    if (error) {
      spdlog::warn("TCP latency probes: connecting failed: {}", error.message());
      return finish();
    }
    asio::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);  // a probe is one small message: send it now
    asio::async_write(socket_, asio::buffer(settings_.preamble), [this](const asio::error_code& write_error, std::size_t) {
      if (finished_) return;
      if (write_error) return finish();
      schedule_next();
    });
  });
}

void TcpProber::schedule_next() {
  if (window_closed_ || engines::Clock::now() >= clock_.deadline) return wind_down();
  timer_.expires_at(due(clock_, settings_.interval_ns, next_));
  timer_.async_wait([this](const asio::error_code& error) {
    if (!error) probe();
  });
}

void TcpProber::probe() {
  if (finished_ || window_closed_) return wind_down();
  in_flight_ = true;
  ProbeRecord record;
  const auto sent = engines::Clock::now();
  record.sent_ns = clock_.since_start(sent);
  asio::async_write(socket_, asio::buffer(message_), [this, record, sent](const asio::error_code& error, std::size_t) mutable {
    if (finished_) return;
    if (error) return finish();
    asio::async_read(socket_, asio::buffer(echo_), [this, record, sent](const asio::error_code& read_error, std::size_t) mutable {
      in_flight_ = false;
      if (finished_) return;
      record.answered = !read_error;
      record.rtt_ns = elapsed_ns(sent);
      log_.add(record);
      stats::add_relaxed(counters_.calls, 1);
      if (read_error) return finish();
      next_ = next_after_now(clock_, settings_.interval_ns, next_ + 1);
      schedule_next();
    });
  });
}

// The window closed: half-close, and the server's echo ends at its EOF; the probe under way (if
// any) still completes first.
void TcpProber::wind_down() {
  if (finished_ || in_flight_) return;
  asio::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  socket_.async_read_some(asio::buffer(echo_), [this](const asio::error_code&, std::size_t) { finish(); });
  timer_.expires_after(kProbeTimeout);
  timer_.async_wait([this](const asio::error_code& error) {
    if (!error) finish();
  });
}

void TcpProber::finish() {
  if (finished_) return;
  finished_ = true;
  timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
  engines::report_finished(counters_, false, done_);
}

void TcpProber::end_window() noexcept {
  window_closed_ = true;
  if (!in_flight_ && !finished_) {
    timer_.cancel();
    wind_down();
  }
}

void TcpProber::close() noexcept {
  finished_ = true;
  timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

ConnectProber::ConnectProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log)
    : context_(place.worker.context()),
      timer_(place.worker.context()),
      timeout_(place.worker.context()),
      settings_(settings),
      log_(log),
      counters_(place.counters),
      done_(std::move(place.done)) {
  std::copy(settings.preamble.begin(), settings.preamble.end(), request_.begin());
  request_.back() = 'c';
}

void ConnectProber::begin(const engines::TestClock& clock) {
  clock_ = clock;
  tick();
}

void ConnectProber::tick() {
  if (finished_) return;
  if (window_closed_ || engines::Clock::now() >= clock_.deadline) {
    if (!socket_) finish();  // else the probe under way finishes it
    return;
  }
  timer_.expires_at(due(clock_, settings_.interval_ns, next_));
  timer_.async_wait([this](const asio::error_code& error) {
    if (error || finished_) return;
    next_ = next_after_now(clock_, settings_.interval_ns, next_ + 1);
    if (!socket_) probe();  // one at a time: a probe still under way takes this interval's turn
    tick();
  });
}

void ConnectProber::probe() {
  socket_ = std::make_unique<tcp::socket>(context_);
  const auto sent = engines::Clock::now();
  current_ = ProbeRecord{};
  current_.sent_ns = clock_.since_start(sent);
  timeout_.expires_after(kProbeTimeout);
  timeout_.async_wait([this](const asio::error_code& error) {
    if (!error) conclude(false);
  });
  socket_->async_connect(settings_.server, [this, sent](const asio::error_code& error) {
    if (error || !socket_) return conclude(false);
    current_.up_ns = elapsed_ns(sent);
    asio::error_code ignored;
    socket_->set_option(tcp::no_delay(true), ignored);
    asio::async_write(*socket_, asio::buffer(request_), [this, sent](const asio::error_code& write_error, std::size_t) {
      if (write_error || !socket_) return conclude(false);
      asio::async_read(*socket_, asio::buffer(&answer_, 1), [this, sent](const asio::error_code& read_error, std::size_t) {
        if (!socket_) return;
        current_.rtt_ns = elapsed_ns(sent);
        conclude(!read_error);
      });
    });
  });
}

// The probe under way ends: answered, or failed or timed out (lost).
void ConnectProber::conclude(bool answered) {
  if (!socket_) return;
  timeout_.cancel();
  current_.answered = answered;
  if (!answered) current_.rtt_ns = current_.up_ns = 0;
  log_.add(current_);
  stats::add_relaxed(counters_.calls, 1);
  asio::error_code ignored;
  socket_->close(ignored);
  socket_.reset();
  if (window_closed_ || engines::Clock::now() >= clock_.deadline) finish();
}

void ConnectProber::finish() {
  if (finished_) return;
  finished_ = true;
  timer_.cancel();
  timeout_.cancel();
  engines::report_finished(counters_, false, done_);
}

void ConnectProber::end_window() noexcept {
  window_closed_ = true;
  timer_.cancel();
  if (!socket_) finish();
}

void ConnectProber::close() noexcept {
  finished_ = true;
  timer_.cancel();
  timeout_.cancel();
  if (socket_) {
    asio::error_code ignored;
    socket_->close(ignored);
  }
}

ProbeEcho::ProbeEcho(StreamPlace& place, std::size_t buffer_size, ServerTally& tally, bool one_connection)
    : buffer_size_(buffer_size),
      tally_(tally),
      counters_(place.counters),
      done_(std::move(place.done)),
      one_connection_(one_connection) {}

void ProbeEcho::attach(tcp::socket socket) {
  std::erase_if(open_, [](const std::weak_ptr<Connection>& each) { return each.expired(); });
  if (finished_ || open_.size() >= (one_connection_ ? 1 : kMaxOpenProbes)) return;  // closed as it goes
  asio::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto connection = std::make_shared<Connection>(Connection{std::move(socket), std::vector<char>(buffer_size_)});
  open_.push_back(connection);
  if (!one_connection_) ++tally_.answered;
  echo(connection);
}

void ProbeEcho::echo(const std::shared_ptr<Connection>& connection) {
  connection->socket.async_read_some(asio::buffer(connection->buffer), [this, connection](const asio::error_code& error,
                                                                                          std::size_t size) {
    if (finished_) return;
    if (error) {  // EOF: the probe (or the test's kept connection) is done
      asio::error_code ignored;
      connection->socket.close(ignored);
      if (one_connection_) finish();
      return;
    }
    tally_.bytes += size;
    stats::add_relaxed(counters_.calls, 1);
    asio::async_write(connection->socket, asio::buffer(connection->buffer.data(), size),
                      [this, connection](const asio::error_code& write_error, std::size_t) {
                        if (!write_error && !finished_) echo(connection);
                      });
  });
}

void ProbeEcho::end_window() noexcept {
  window_closed_ = true;
  if (!one_connection_ || open_.empty()) finish();
}

void ProbeEcho::finish() {
  if (finished_) return;
  close();
  engines::report_finished(counters_, false, done_);
}

void ProbeEcho::close() noexcept {
  finished_ = true;
  for (const std::weak_ptr<Connection>& each : open_)
    if (std::shared_ptr<Connection> connection = each.lock()) {
      asio::error_code ignored;
      connection->socket.close(ignored);
    }
}

}  // namespace testio::workloads::latency
