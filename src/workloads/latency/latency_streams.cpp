// Latency under load's data path: the probe streams of each kind and the sides that make them.
//
// The latency probes' streams. The client's send one probe each interval on the test's clock
// (absolute deadlines, so a late one does not shift the rest), time each answer and log it; the
// server's answer. A probe that gets no answer is logged as lost, never as a failed stream: a
// blocked probe port is a finding (reported), and the load beside it is still measured.
// Owner: the worker each stream is added to; the lifecycle reaches one only through that worker
// (begin, end_window, close, and on the server attach()).
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <vector>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

#include "engines/worker.hpp"
#include "config/config.hpp"
#include "engines/stream_task.hpp"
#include "stats/histogram.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/latency/latency.hpp"
#include "workloads/part.hpp"
#include "workloads/udp/udp.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::latency {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;
using asio::ip::udp;
namespace wire = testio::workloads::udp;  // the flow's hello

// The UDP probes' hello, linger and marks.

constexpr auto kHelloRetry = 100ms;
// How long the last probes may take to come back once the window closed (three of the longest
// round trips seen, within these bounds): beyond it they are lost.
constexpr std::chrono::nanoseconds kMinLinger = 100ms, kMaxLinger = 1s;
// The most probes one flow keeps a mark for: an hour at 10 ms. Later ones are sent and counted lost
// or answered in the log's own count only.
constexpr std::uint64_t kMaxMarks = 360'000;

std::uint64_t ns_between(engines::Clock::time_point from, engines::Clock::time_point to) {
  return to > from ? static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count())
                   : 0;
}

std::uint64_t positive(std::int64_t value) { return value > 0 ? static_cast<std::uint64_t>(value) : 0; }

// The TCP probes' timeout and pace.

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

// UDP probes: the client's prober and the server's reflector.
UdpProber::UdpProber(StreamPlace& place, ProbeSettings settings, ProbeLog& log)
    : socket_(place.worker.context()),
      timer_(place.worker.context()),
      linger_timer_(place.worker.context()),
      settings_(settings),
      log_(log),
      counters_(place.counters),
      done_(std::move(place.done)),
      buffer_(std::max(settings.size, kProbeSize)),
      answer_(std::max(settings.size, kProbeSize) + 1) {}

void UdpProber::begin(const engines::TestClock& clock) {
  clock_ = clock;
  const double window_ns = clock.deadline == engines::Clock::time_point::max()
                               ? 0
                               : static_cast<double>(ns_between(clock.start, clock.deadline));
  answered_.assign(std::min<std::uint64_t>(kMaxMarks, static_cast<std::uint64_t>(window_ns / settings_.interval_ns) + 2),
                   0);
  asio::error_code error;
  const udp::endpoint server(settings_.server.address(), settings_.server.port());
  socket_.open(server.protocol(), error);
  if (!error) socket_.connect(server, error);
  if (error) {
    util::log_warn("UDP latency probes: {}; they count as lost", error.message());
    window_closed_ = true;
    return linger();
  }
  say_hello();
  await_datagrams();
  send_due();
}

// Until the server's UDP port answers; every probe due meanwhile counts as lost.
void UdpProber::say_hello() {
  if (hello_answered_ || window_closed_ || finished_) return;
  unsigned char hello[wire::kHelloSize];
  wire::write_hello({settings_.test_id, settings_.number}, false, hello);
  (void)::send(socket_.native_handle(), hello, sizeof hello, MSG_DONTWAIT);
  linger_timer_.expires_after(kHelloRetry);
  linger_timer_.async_wait([this](const asio::error_code& error) {
    if (!error) say_hello();
  });
}

void UdpProber::send_due() {
  if (finished_) return;
  const auto now = engines::Clock::now();
  if (window_closed_ || now >= clock_.deadline) return linger();
  // Every probe due by now goes (a worker that was late sends the ones it missed at once).
  const std::uint64_t due = ns_between(clock_.start, now) / settings_.interval_ns + 1;
  for (; sent_ < due; ++sent_) {
    if (!hello_answered_) {  // not sent: the flow is not open yet (lost if it never opens)
      first_probe_ = sent_ + 1;
      continue;
    }
    ProbeTimes times;
    times.sequence = sent_;
    times.sent_mono_ns = static_cast<std::uint64_t>(clock_.since_start(engines::Clock::now()));
    times.sent_ns = stats::realtime_ns();
    times.offset_ns = settings_.clock_offset_ns;
    write_probe(times, settings_.test_id, settings_.number, buffer_.data());
    if (::send(socket_.native_handle(), buffer_.data(), buffer_.size(), MSG_DONTWAIT) > 0)
      stats::add_relaxed(counters_.calls, 1);
  }
  timer_.expires_at(clock_.start + std::chrono::nanoseconds(sent_ * settings_.interval_ns));
  timer_.async_wait([this](const asio::error_code& error) {
    if (!error) send_due();
  });
}

void UdpProber::await_datagrams() {
  socket_.async_wait(udp::socket::wait_read, [this](const asio::error_code& error) {
    if (error || finished_) return;
    while (!finished_) {
      const ssize_t size = ::recv(socket_.native_handle(), answer_.data(), answer_.size(), MSG_DONTWAIT);
      if (size < 0 && (errno == ECONNREFUSED || errno == EINTR)) continue;  // a refused hello's ICMP
      if (size < 0) break;  // EAGAIN: until the next datagram
      take(answer_.data(), static_cast<std::size_t>(size));
    }
    if (!finished_) await_datagrams();
  });
}

void UdpProber::take(const unsigned char* data, std::size_t size) {
  const auto now = engines::Clock::now();
  if (!hello_answered_) {
    const std::optional<wire::FlowHello> hello = wire::read_hello(data, size, true);
    hello_answered_ = hello && hello->test_id == settings_.test_id && hello->stream == settings_.number;
    if (hello_answered_) linger_timer_.cancel();
    return;
  }
  const std::optional<ProbeTimes> times = read_probe(data, size, settings_.test_id, settings_.number);
  if (!times || times->sequence >= sent_ || times->received_ns == 0) return;  // a stray, or not an echo
  if (times->sequence < answered_.size()) {
    if (answered_[times->sequence]) return;  // a duplicate
    answered_[times->sequence] = 1;
  }
  const std::int64_t received_ns = static_cast<std::int64_t>(stats::realtime_ns());
  const std::uint64_t server_ns = times->replied_ns > times->received_ns ? times->replied_ns - times->received_ns : 0;
  const std::uint64_t elapsed = ns_between(clock_.start, now) - std::min(ns_between(clock_.start, now), times->sent_mono_ns);
  ProbeRecord record;
  record.sent_ns = static_cast<std::int64_t>(times->sent_mono_ns);
  record.rtt_ns = elapsed > server_ns ? elapsed - server_ns : 0;
  record.up_ns = positive(static_cast<std::int64_t>(times->received_ns) -
                          (static_cast<std::int64_t>(times->sent_ns) + settings_.clock_offset_ns));
  record.down_ns = positive(received_ns + settings_.clock_offset_ns - static_cast<std::int64_t>(times->replied_ns));
  record.answered = true;
  longest_ns_ = std::max(longest_ns_, record.rtt_ns);
  log_.add(record);
  ++answered_count_;
  if (lingering_ && all_answered()) finish();
}

bool UdpProber::all_answered() const noexcept { return hello_answered_ && answered_count_ == sent_ - first_probe_; }

// The window closed: the last echoes have a while to come back (none, when every one has).
void UdpProber::linger() {
  lingering_ = true;
  if (all_answered()) return finish();
  timer_.cancel();
  linger_timer_.expires_after(std::clamp(std::chrono::nanoseconds(3 * longest_ns_), kMinLinger, kMaxLinger));
  linger_timer_.async_wait([this](const asio::error_code& error) {
    if (!error) finish();
  });
}

void UdpProber::finish() {
  if (finished_) return;
  finished_ = true;
  // Each probe sent that got no echo is logged lost at the time it was sent; each one due, when the
  // flow never opened.
  for (std::uint64_t sequence = hello_answered_ ? first_probe_ : 0; sequence < sent_ && sequence < answered_.size();
       ++sequence) {
    if (answered_[sequence]) continue;
    ProbeRecord lost;
    lost.sent_ns = static_cast<std::int64_t>(sequence * settings_.interval_ns);
    log_.add(lost);
  }
  asio::error_code ignored;
  socket_.close(ignored);
  engines::report_finished(counters_, false, done_);
}

void UdpProber::end_window() noexcept {
  if (window_closed_ || finished_) return;
  window_closed_ = true;
  linger();
}

void UdpProber::close() noexcept {
  finished_ = true;
  timer_.cancel();
  linger_timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

UdpReflector::UdpReflector(StreamPlace& place, ProbeSettings settings, ServerTally& tally)
    : socket_(place.worker.context()),
      settings_(settings),
      tally_(tally),
      counters_(place.counters),
      done_(std::move(place.done)),
      buffer_(std::max(settings.size, kProbeSize) + 1) {}

void UdpReflector::begin(const engines::TestClock&) {}

void UdpReflector::attach(udp::socket socket) {
  if (finished_) return;
  socket_ = std::move(socket);
  await_probes();
}

void UdpReflector::await_probes() {
  socket_.async_wait(udp::socket::wait_read, [this](const asio::error_code& error) {
    if (error || finished_) return;
    for (;;) {
      const ssize_t size = ::recv(socket_.native_handle(), buffer_.data(), buffer_.size(), MSG_DONTWAIT);
      if (size < 0 && (errno == ECONNREFUSED || errno == EINTR)) continue;
      if (size < 0) break;  // EAGAIN: until the next probe
      const std::uint64_t received_ns = stats::realtime_ns();
      const auto length = static_cast<std::size_t>(size);
      if (wire::read_hello(buffer_.data(), length, false)) {  // said again: the answer was lost
        unsigned char answer[wire::kHelloSize];
        wire::write_hello({settings_.test_id, settings_.number}, true, answer);
        (void)::send(socket_.native_handle(), answer, sizeof answer, MSG_DONTWAIT);
        continue;
      }
      std::optional<ProbeTimes> times = read_probe(buffer_.data(), length, settings_.test_id, settings_.number);
      if (!times || times->received_ns != 0) continue;  // a stray
      const std::int64_t up = static_cast<std::int64_t>(received_ns) - (static_cast<std::int64_t>(times->sent_ns) +
                                                                         times->offset_ns);
      tally_.up_ns.record(positive(up));
      ++tally_.answered;
      stats::add_relaxed(counters_.calls, 1);
      stamp_reply(received_ns, stats::realtime_ns(), buffer_.data());
      (void)::send(socket_.native_handle(), buffer_.data(), length, MSG_DONTWAIT);
    }
    await_probes();
  });
}

void UdpReflector::end_window() noexcept { finish(); }

void UdpReflector::finish() {
  if (finished_) return;
  finished_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  engines::report_finished(counters_, false, done_);
}

void UdpReflector::close() noexcept {
  finished_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
}

// TCP probes: the client's kept connection and its connection per probe, and the server's echo.
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
      util::log_warn("TCP latency probes: connecting failed: {}", error.message());
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

constexpr std::size_t kMaxLogged = std::size_t{1} << 20;  // probes one stream keeps (24 MiB at most)

ProbePlan plan_of(const LatencySpec& latency) {
  ProbePlan plan;
  plan.interval_ms = static_cast<double>(latency.interval_us) / 1e3;
  plan.connect_interval_ms = static_cast<double>(latency.connect_interval_us) / 1e3;
  plan.size = latency.probe_size;
  plan.kinds = {latency.udp, latency.tcp, latency.connect};
  return plan;
}

ProbeSettings settings_for(const LatencySpec& latency, ProbeKind kind, const StreamPlace& place) {
  ProbeSettings settings;
  settings.interval_ns = (kind == ProbeKind::connect ? latency.connect_interval_us : latency.interval_us) * 1000;
  settings.size = static_cast<std::size_t>(kind == ProbeKind::connect ? 1 : latency.probe_size);
  settings.test_id = place.test_id;
  settings.number = place.number;
  settings.server = *place.server;
  settings.preamble = place.preamble;
  settings.clock_offset_ns = place.clock_offset_ns;
  return settings;
}

void describe(const LatencySpec& latency, report::StartInfo& start) {
  std::string kinds;
  for (ProbeKind kind : kinds_of(latency)) kinds += (kinds.empty() ? "" : ", ") + std::string(name(kind));
  start.manner = "latency probes (" + kinds + ") every " + std::to_string(latency.interval_us / 1000) + " ms";
}

// The client's probes. Owner: the lifecycle (control thread); each log is written by its probe's
// worker and read once the workers stopped.
class ClientProbes final : public TestSide {
 public:
  ClientProbes(const config::Config& config, const spec::TestSpec& spec)
      : latency_(part_of<LatencySpec>(spec)), kinds_(kinds_of(latency_)), phases_(phases_of(config.spec)) {
    for (ProbeKind kind : kinds_) {
      const std::uint64_t every = kind == ProbeKind::connect ? latency_.connect_interval_us : latency_.interval_us;
      const double probes = spec.window_s() * 1e6 / static_cast<double>(every) + 16;
      logs_[static_cast<std::size_t>(kind)] =
          std::make_unique<ProbeLog>(std::min(kMaxLogged, static_cast<std::size_t>(probes)));
    }
  }

  DirectionLayout layout() const override { return {static_cast<std::uint32_t>(kinds_.size()), 0}; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { describe(latency_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    const ProbeKind kind = kinds_[place.index];
    const ProbeSettings settings = settings_for(latency_, kind, place);
    ProbeLog& log = *logs_[static_cast<std::size_t>(kind)];
    if (kind == ProbeKind::udp) return std::make_unique<UdpProber>(place, settings, log);
    if (kind == ProbeKind::tcp) return std::make_unique<TcpProber>(place, settings, log);
    return std::make_unique<ConnectProber>(place, settings, log);
  }

  // Each kind's probes answered in the interval: how many, and their p50 and max round trip; udp's
  // also the p50 one-way delays up and down (the timeline testio plot draws).
  void annotate(stats::IntervalRecord& record) override {
    for (ProbeKind kind : kinds_) {
      const auto k = static_cast<std::size_t>(kind);
      const ProbeLog& log = *logs_[k];
      std::vector<std::uint64_t> round_trips, ups, downs;
      for (const std::size_t end = log.size(); seen_[k] < end; ++seen_[k]) {
        const ProbeRecord& probe = log[seen_[k]];
        if (!probe.answered) continue;
        round_trips.push_back(probe.rtt_ns);
        if (kind != ProbeKind::udp) continue;
        ups.push_back(probe.up_ns);
        downs.push_back(probe.down_ns);
      }
      const DelayFigures figures = delay_figures(round_trips);
      const std::string prefix = name(kind);
      record.figures.emplace_back(prefix + "_count", static_cast<double>(figures.count));
      record.figures.emplace_back(prefix + "_p50_ms", figures.p50_ms);
      record.figures.emplace_back(prefix + "_max_ms", figures.max_ms);
      if (kind != ProbeKind::udp) continue;
      record.figures.emplace_back("udp_up_p50_ms", delay_figures(ups).p50_ms);
      record.figures.emplace_back("udp_down_p50_ms", delay_figures(downs).p50_ms);
    }
  }

  void add_to_report(report::TestReport& report) const override {
    std::array<std::vector<ProbeRecord>, 3> records;
    std::uint64_t dropped = 0;
    for (std::size_t k = 0; k < records.size(); ++k) {
      if (!logs_[k]) continue;
      const ProbeLog& log = *logs_[k];
      records[k].reserve(log.size());
      for (std::size_t i = 0; i < log.size(); ++i) records[k].push_back(log[i]);
      dropped += log.dropped();
    }
    report.sections.push_back(
        make_client_section(plan_of(latency_), phases_, std::move(records), dropped, report.start.peer_clock));
  }

 private:
  LatencySpec latency_;
  std::vector<ProbeKind> kinds_;
  std::vector<Phase> phases_;
  std::array<std::unique_ptr<ProbeLog>, 3> logs_;  // by kind: udp, tcp, connect
  std::array<std::size_t, 3> seen_{};              // by kind: the records the intervals have told
};

// The server's answers. Owner: the lifecycle; each stream and its tally belong to its worker.
class ServerAnswers final : public TestSide {
 public:
  explicit ServerAnswers(const spec::TestSpec& spec)
      : latency_(part_of<LatencySpec>(spec)), kinds_(kinds_of(latency_)), streams_(kinds_.size(), nullptr) {}

  DirectionLayout layout() const override { return {static_cast<std::uint32_t>(kinds_.size()), 0}; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { describe(latency_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    const ProbeKind kind = kinds_[place.index];
    ServerTally& tally = tallies_[static_cast<std::size_t>(kind)];
    std::unique_ptr<engines::StreamTask> stream;
    if (kind == ProbeKind::udp)
      stream = std::make_unique<UdpReflector>(place, settings_for(latency_, kind, place), tally);
    else
      stream = std::make_unique<ProbeEcho>(place, std::max<std::size_t>(latency_.probe_size, 64), tally,
                                           kind == ProbeKind::tcp);
    streams_[place.index] = stream.get();
    return stream;
  }

  std::string route(std::uint32_t slot, tcp::socket socket, engines::Worker& worker) override {
    if (slot >= kinds_.size() || kinds_[slot] == ProbeKind::udp) return "connection " + std::to_string(slot) + " is no TCP probe's";
    auto owned = std::make_shared<tcp::socket>(std::move(socket));
    worker.post([echo = static_cast<ProbeEcho*>(streams_[slot]), owned] { echo->attach(std::move(*owned)); });
    return {};
  }

  std::string route_flow(std::uint32_t slot, asio::ip::udp::socket socket, engines::Worker& worker) override {
    if (slot >= kinds_.size() || kinds_[slot] != ProbeKind::udp) return "flow " + std::to_string(slot) + " is no UDP probe's";
    auto owned = std::make_shared<asio::ip::udp::socket>(std::move(socket));
    worker.post([reflector = static_cast<UdpReflector*>(streams_[slot]), owned] { reflector->attach(std::move(*owned)); });
    return {};
  }

  void add_to_report(report::TestReport& report) const override {
    ServerProbes probes;
    probes.plan = plan_of(latency_);
    probes.udp_answered = tallies_[0].answered;
    probes.udp_up_ns = tallies_[0].up_ns;
    probes.tcp_messages = latency_.probe_size ? tallies_[1].bytes / latency_.probe_size : 0;
    probes.connects = tallies_[2].answered;
    report.sections.push_back(make_server_section(std::move(probes)));
  }

 private:
  LatencySpec latency_;
  std::vector<ProbeKind> kinds_;
  std::vector<engines::StreamTask*> streams_;  // by connection; owned by their workers
  std::array<ServerTally, 3> tallies_;         // by kind: udp, tcp, connect
};

}  // namespace

std::unique_ptr<TestSide> client_probes(const config::Config& config, const spec::TestSpec& spec) {
  return std::make_unique<ClientProbes>(config, spec);
}

std::unique_ptr<TestSide> server_answers(const spec::TestSpec& spec) { return std::make_unique<ServerAnswers>(spec); }

}  // namespace testio::workloads::latency
