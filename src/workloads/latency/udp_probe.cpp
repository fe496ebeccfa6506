// UDP probes: the client's prober and the server's reflector (probes.hpp).
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/latency/probe_datagram.hpp"
#include "workloads/latency/probes.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::workloads::latency {
namespace {

using namespace std::chrono_literals;
namespace wire = testio::workloads::udp;  // the flow's hello
using asio::ip::udp;

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

}  // namespace

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
    spdlog::warn("UDP latency probes: {}; they count as lost", error.message());
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

}  // namespace testio::workloads::latency
