// -u's data path: each flow's stream (its socket and hello, then its sender or receiver) and the
// side that makes a direction's flows and routes the server's sockets to them.
//
// One UDP flow's stream on its worker: the socket, the client's hello until the server answers,
// and then the datagrams, sent (UdpSender) or received and accounted (UdpReceiver). Owner: its
// worker; the lifecycle reaches it only through the worker (begin, end_window, close, and on the
// server attach(), posted when the flow's hello arrived).
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include "engines/worker.hpp"
#include "engines/stream_task.hpp"
#include "net/socket_options.hpp"
#include "net/udp_socket.hpp"
#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "stats/summary.hpp"
#include "stats/udp_sequence.hpp"
#include "util/log.hpp"
#include "util/unique_fd.hpp"
#include "workloads/part.hpp"
#include "workloads/udp/udp.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::udp {
namespace {

using namespace std::chrono_literals;
using asio::ip::udp;

// A sender's or receiver's calls in a row; then the worker's other flows get their turn.
constexpr int kCallsBeforeYield = 16;

// The wall clock a testio datagram's header carries.
double realtime_s() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The flow's hello and watchdog.
constexpr auto kHelloRetry = 100ms;   // a hello (or its answer) lost on the way is said again
constexpr unsigned kHelloTries = 50;  // 5 s in all, then the flow fails
constexpr auto kPeerGrace = 3s;       // beyond the window before a flow gives its peer up

udp::endpoint udp_endpoint(const asio::ip::tcp::endpoint& endpoint) { return {endpoint.address(), endpoint.port()}; }

// The receiver's buffers and quiet spells.
constexpr std::size_t kGroSlot = 65536;     // a coalesced buffer holds up to 64 KiB
constexpr auto kQuietCheck = 50ms;
constexpr auto kQuietAfterEnd = 200ms;      // after the end marker: what is still missing is lost
constexpr auto kQuietAfterPeerDone = 250ms; // after the client said it is done
constexpr int kDefaultReceiveBuffer = 4 << 20;

// The sender's batches, pace and end markers.
constexpr std::size_t kMaxGsoBytes = 65000;        // one GSO send fits one IP packet's 64 KiB
constexpr std::uint32_t kMaxSegments = 64;         // UDP_MAX_SEGMENTS of older kernels
constexpr std::size_t kMaxCallBytes = 256 * 1024;  // per call: bounds a flow's buffer
constexpr unsigned kEndMarkers = 3;                // said three times, 10 ms apart: one may be lost
constexpr auto kEndSpacing = 10ms;
constexpr auto kQueueFullRetry = 100us;            // ENOBUFS: the device queue, which no wait reports
// A paced sender sends what a millisecond holds at once, but never more than 64 KiB: a burst must
// fit in a receiver's default buffer (208 KiB) with room to spare, or the pace itself makes loss.
constexpr double kPacingQuantumS = 1e-3;
constexpr std::size_t kMaxBurstBytes = 64 * 1024;

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

// UdpFlow: what a flow's sender and receiver share: the client's socket and hello, the server's
// attach, the watchdog that ends a flow whose peer never came or went away.
UdpFlow::UdpFlow(StreamPlace& place, FlowSettings settings, FastPaths& paths)
    : context_(place.worker.context()),
      socket_(context_),
      server_(udp_endpoint(*place.server)),
      counters_(place.counters),
      settings_(settings),
      paths_(paths),
      timer_(context_),
      done_(std::move(place.done)),
      client_(place.server->port() != 0),
      watchdog_(context_) {}

void UdpFlow::begin(const engines::TestClock& clock) {
  clock_ = clock;
  begun_ = true;
  watch_for_peer();
  if (attached_) {  // iperf3's sessions hand the sockets over before the test begins
    running_ = true;
    run();
  } else if (client_ && prepare_socket()) {
    say_hello(kHelloTries);
  }
}

void UdpFlow::attach(udp::socket socket) {
  if (closed_ || finished_) return;
  socket_ = std::move(socket);
  if (!prepare_socket()) return;
  attached_ = true;
  if (!begun_) return;
  running_ = true;
  run();
}

// The client's socket opened (and connected unless --no-connect), either side's given -w and the
// drop count; the fast paths are the sender's and receiver's own. False (the flow failed) when the
// kernel refused.
void UdpFlow::check_path_mtu() {
  if (paths_.fragmented.load(std::memory_order_relaxed)) return;
  const bool v4 = server_.address().is_v4();
  // A socket of its own, connected to learn the route's MTU (a --no-connect flow's is not).
  util::UniqueFd probe(::socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  int mtu = 0;
  socklen_t size = sizeof(mtu);
  if (!probe.valid() || ::connect(probe.get(), server_.data(), static_cast<socklen_t>(server_.size())) != 0 ||
      ::getsockopt(probe.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU : IPV6_MTU, &mtu, &size) != 0 || mtu <= 0)
    return;
  const std::size_t carried = static_cast<std::size_t>(mtu) - (v4 ? 28 : 48);  // IP and UDP headers
  if (settings_.datagram <= carried || !FastPaths::first(paths_.fragmented)) return;
  const std::size_t fragments = (settings_.datagram + carried - 1) / carried;
  util::log_warn("-l {} is more than one packet of the path to the server carries (MTU {}: {} bytes): each datagram "
               "goes in about {} IP fragments, and losing one loses the datagram",
               settings_.datagram, mtu, carried, fragments);
}

bool UdpFlow::prepare_socket() {
  try {
    if (client_) socket_.open(server_.protocol());
    if (settings_.window) (void)net::set_socket_buffers(fd(), settings_.window);
    if (settings_.tos) net::set_tos(fd(), settings_.tos);
    if (settings_.dont_fragment) net::set_dont_fragment(fd());
    if (client_ && settings_.connected) socket_.connect(server_);
    if (client_) check_path_mtu();
  } catch (const std::runtime_error& error) {  // a system_error, or the kernel refused -S
    util::log_error("UDP flow {}: {}", settings_.stream + 1, error.what());
    finish(true);
    return false;
  }
  if (std::string refused = net::enable_drop_counts(fd()); !refused.empty() && FastPaths::first(paths_.drops_unknown))
    util::log_warn("{}: the receiving socket's own drops cannot be told from loss", refused);
  return true;
}

void UdpFlow::say_hello(unsigned tries_left) {
  if (closed_ || finished_ || running_) return;
  if (tries_left == 0) {
    util::log_error("UDP flow {}: the server did not answer its hello on UDP port {} within 5 s (is UDP blocked on "
                  "the way?)",
                  settings_.stream + 1, server_.port());
    finish(true);
    return;
  }
  unsigned char hello[kHelloSize];
  write_hello({settings_.test_id, settings_.stream}, false, hello);
  // A lost hello or a refused port (ICMP) is answered by the next try.
  (void)::sendto(fd(), hello, sizeof(hello), MSG_DONTWAIT, settings_.connected ? nullptr : server_.data(),
                 settings_.connected ? 0 : static_cast<socklen_t>(server_.size()));
  timer_.expires_after(kHelloRetry);
  timer_.async_wait([this, tries_left](const asio::error_code& error) {
    if (error || running_ || finished_ || closed_) return;
    asio::error_code ignored;
    socket_.cancel(ignored);
    say_hello(tries_left - 1);
  });
  await_answer(tries_left);
}

void UdpFlow::await_answer(unsigned tries_left) {
  socket_.async_wait(udp::socket::wait_read, [this, tries_left](const asio::error_code& error) {
    if (error || running_ || finished_ || closed_) return;
    unsigned char answer[kTestioHeader];
    for (;;) {
      udp::endpoint from;
      socklen_t from_size = static_cast<socklen_t>(from.capacity());
      // MSG_TRUNC: the datagram's whole size, though only its header is read.
      const ssize_t size = ::recvfrom(fd(), answer, sizeof(answer), MSG_DONTWAIT | MSG_TRUNC, from.data(), &from_size);
      if (size < 0) break;  // EAGAIN, or a refused hello's ICMP: wait on
      if (!settings_.connected && from != server_) continue;  // not the server's
      std::optional<FlowHello> hello = read_hello(answer, static_cast<std::size_t>(size), true);
      const bool answered = hello && hello->test_id == settings_.test_id && hello->stream == settings_.stream;
      if (answered || take_early(answer, static_cast<std::size_t>(size))) {
        running_ = true;
        timer_.cancel();
        run();
        return;
      }
    }
    await_answer(tries_left);
  });
}

// A timed flow gives its peer the window and a grace beyond it; a counted one waits for the end
// of the test (end_window) or, receiving, for a quiet spell.
void UdpFlow::watch_for_peer() {
  if (clock_.deadline == engines::Clock::time_point::max()) return;
  watchdog_.expires_at(clock_.deadline + kPeerGrace);
  watchdog_.async_wait([this](const asio::error_code& error) {
    if (error || finished_ || closed_) return;
    if (!running_) util::log_warn("UDP flow {}: its peer never came", settings_.stream + 1);
    overdue();
  });
}

void UdpFlow::end_window() noexcept {
  window_closed_ = true;
  if (!running_ && !client_ && !finished_) {
    finish(true);  // the client is done and this flow's hello never came
    return;
  }
  if (running_) window_ended();
}

void UdpFlow::overdue() { finish(!running_); }

void UdpFlow::finish(bool failed) {
  if (finished_) return;
  finished_ = true;
  timer_.cancel();
  watchdog_.cancel();
  engines::report_finished(counters_, failed, done_);
}

void UdpFlow::close() noexcept {
  closed_ = true;
  timer_.cancel();
  watchdog_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

// A datagram's header as the sender writes it at `now_s`.
DatagramHeader header_at(double now_s, std::uint64_t sequence, const FlowSettings& settings) {
  const double whole = std::floor(now_s);
  DatagramHeader header;
  header.sec = static_cast<std::uint32_t>(whole);
  header.usec = std::min<std::uint32_t>(static_cast<std::uint32_t>((now_s - whole) * 1e6), 999999);
  header.sequence = sequence;
  header.stream = settings.stream;
  header.test_id = settings.test_id;
  return header;
}

// UdpSender: datagrams laid out in place (each with its header) in messages of one or many
// datagrams (GSO), several messages per sendmmsg, paced to absolute deadlines so the rate does not
// drift; then the end marker, which tells the receiver how many it sent.
UdpSender::UdpSender(StreamPlace& place, FlowSettings settings, FastPaths& paths) : UdpFlow(place, settings, paths) {
  const std::size_t datagram = settings_.datagram;
  segments_ = settings_.gso ? static_cast<std::uint32_t>(std::clamp<std::size_t>(kMaxGsoBytes / datagram, 1, kMaxSegments)) : 1;
  const std::size_t per_message = segments_ * datagram;
  const std::size_t count = std::clamp<std::size_t>(kMaxCallBytes / per_message, 1, settings_.batch);
  buffer_.assign(count * per_message, 0);
  iovecs_.resize(count);
  messages_.resize(count);
  if (settings_.quota) total_datagrams_ = (settings_.quota + datagram - 1) / datagram;
  if (settings_.wire == Wire::testio) offset_s_ = static_cast<double>(settings_.clock_offset_ns) * 1e-9;
  if (settings_.rate_bps > 0) {
    datagram_ns_ = static_cast<double>(datagram) * 8 / settings_.rate_bps * 1e9;
    const double per_quantum = kPacingQuantumS * 1e9 / datagram_ns_;
    const std::uint64_t burst = std::max<std::size_t>(kMaxBurstBytes / datagram, 1);
    burst_ = std::min<std::uint64_t>(burst, count * segments_);
    quantum_ = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(per_quantum), 1, burst_);
  }
}

void UdpSender::run() {
  if (segments_ > 1) {
    if (std::string refused = net::enable_gso(fd(), static_cast<std::uint16_t>(settings_.datagram)); !refused.empty()) {
      if (FastPaths::first(paths_.gso_refused)) util::log_warn("{}: one datagram per send", refused);
      segments_ = 1;
    }
  }
  paced_from_ = engines::Clock::now();
  send_some();
}

// With -n the flow's bytes are exact: the last datagram carries the rest, and one too short for a
// header takes some of the one before it.
std::size_t UdpSender::size_of(std::uint64_t sequence) const noexcept {
  if (!total_datagrams_ || sequence + 2 < total_datagrams_) return settings_.datagram;
  const std::size_t last = static_cast<std::size_t>(settings_.quota - (total_datagrams_ - 1) * settings_.datagram);
  const std::size_t header = header_size(settings_.wire);
  const bool short_last = last < header && total_datagrams_ > 1;
  if (sequence + 1 == total_datagrams_) return short_last ? header : last;
  return short_last ? settings_.datagram - (header - last) : settings_.datagram;
}

std::uint64_t UdpSender::due_by(engines::Clock::time_point now) const noexcept {
  const double elapsed_ns = static_cast<double>(std::chrono::nanoseconds(now - paced_from_).count());
  return static_cast<std::uint64_t>(std::max(0.0, elapsed_ns) / datagram_ns_) + 1;
}

engines::Clock::time_point UdpSender::due_time(std::uint64_t datagram) const noexcept {
  const auto offset = std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(datagram - 1) * datagram_ns_));
  return paced_from_ + std::chrono::duration_cast<engines::Clock::duration>(offset);
}

// Writes up to `datagrams` datagrams into the messages; returns how many messages hold them.
std::size_t UdpSender::lay_out(std::uint64_t datagrams, double now_s) {
  const std::size_t per_message = segments_ * settings_.datagram;
  std::uint64_t sequence = sent_;
  std::size_t used = 0;
  for (; used < messages_.size() && sequence < sent_ + datagrams; ++used) {
    unsigned char* start = buffer_.data() + used * per_message;
    std::size_t bytes = 0;
    for (std::uint32_t k = 0; k < segments_ && sequence < sent_ + datagrams; ++k) {
      const std::size_t size = size_of(sequence);
      write_wire_header(settings_.wire, header_at(now_s, sequence++, settings_), start + bytes);  // now_s on the server's clock
      bytes += size;
      if (size < settings_.datagram) break;  // a short datagram ends its GSO send
    }
    iovecs_[used] = {start, bytes};
    msghdr& header = messages_[used].msg_hdr;
    header = {};
    header.msg_iov = &iovecs_[used];
    header.msg_iovlen = 1;
    if (!settings_.connected && client()) {
      header.msg_name = server_.data();
      header.msg_namelen = static_cast<socklen_t>(server_.size());
    }
  }
  return used;
}

// Up to kCallsBeforeYield calls, then the worker's other flows get their turn; a paced sender
// waits for its next datagrams' time, a full socket for room.
void UdpSender::send_some() {
  for (int call = 0; call < kCallsBeforeYield; ++call) {
    if (closed_ || finished()) return;
    const engines::Clock::time_point now = engines::Clock::now();
    const bool quota_done = total_datagrams_ && sent_ >= total_datagrams_;
    if (window_closed_ || now >= clock_.deadline || quota_done) {
      send_end_markers(kEndMarkers);
      return;
    }
    std::uint64_t want = messages_.size() * segments_;
    if (total_datagrams_) want = std::min(want, total_datagrams_ - sent_);
    if (datagram_ns_ > 0) {
      const std::uint64_t due_total = due_by(now), due = due_total > sent_ ? due_total - sent_ : 0;
      const std::uint64_t enough = std::min(quantum_, want);
      if (due < enough) {
        timer_.expires_at(std::min(due_time(sent_ + enough), clock_.deadline));
        timer_.async_wait([this](const asio::error_code& error) {
          if (!error) send_some();
        });
        return;
      }
      want = std::min({want, due, burst_});  // catching up, too, in bursts a receiver can hold
    }
    const std::size_t messages = lay_out(want, realtime_s() + offset_s_);
    const int sent = ::sendmmsg(fd(), messages_.data(), static_cast<unsigned>(messages), MSG_DONTWAIT);
    if (sent < 0) {
      if (!retry_later(errno)) return;
      continue;
    }
    count_sent(static_cast<std::size_t>(sent));
  }
  asio::post(context_, [this] { send_some(); });
}

// A send the kernel refused: true to go on at once; otherwise the sender waits (for room, for a
// moment) or has failed.
bool UdpSender::retry_later(int error) {
  auto again = [this](const asio::error_code& failed) {
    if (!failed) send_some();
  };
  if (error == EAGAIN || error == EWOULDBLOCK) {
    socket_.async_wait(asio::ip::udp::socket::wait_write, again);
    return false;
  }
  if (error == ENOBUFS || error == ECONNREFUSED) {  // a full device queue; the peer's port closed (ICMP)
    timer_.expires_after(kQueueFullRetry);
    timer_.async_wait(again);
    return false;
  }
  // The device cannot segment (EIO), or a datagram needs IP fragments, which GSO cannot make (EMSGSIZE).
  if ((error == EIO || error == EINVAL || error == EMSGSIZE) && segments_ > 1) {
    give_up_gso();
    return true;
  }
  util::log_error("UDP flow {}: sending failed: {}", settings_.stream + 1, std::strerror(error));
  finish(true);
  return false;
}

void UdpSender::count_sent(std::size_t messages) {
  std::uint64_t bytes = 0, datagrams = 0;
  for (std::size_t i = 0; i < messages; ++i) {
    bytes += messages_[i].msg_len;
    datagrams += (iovecs_[i].iov_len + settings_.datagram - 1) / settings_.datagram;
  }
  sent_ += datagrams;
  counters_.record(bytes, clock_.since_start(engines::Clock::now()));
  stats::add_relaxed(counters_.datagrams, datagrams);
}

// The device cannot segment (EIO without checksum offload): one datagram per message from now on.
void UdpSender::give_up_gso() {
  const int error = errno;
  (void)net::enable_gso(fd(), 0);
  segments_ = 1;
  if (FastPaths::first(paths_.gso_refused))
    util::log_warn("UDP_SEGMENT sends fail on this path ({}): one datagram per send", std::strerror(error));
}

void UdpSender::send_end_markers(unsigned left) {
  if (left == 0 || closed_ || settings_.wire != Wire::testio) {  // iperf3's flows end on TEST_END alone
    finish(false);
    return;
  }
  unsigned char marker[kTestioHeader];
  DatagramHeader header = header_at(realtime_s() + offset_s_, sent_, settings_);
  header.end = true;
  write_header(header, marker);
  (void)::sendto(fd(), marker, sizeof(marker), MSG_DONTWAIT, settings_.connected || !client() ? nullptr : server_.data(),
                 settings_.connected || !client() ? 0 : static_cast<socklen_t>(server_.size()));
  timer_.expires_after(kEndSpacing);
  timer_.async_wait([this, left](const asio::error_code& error) {
    if (!error) send_end_markers(left - 1);
  });
}

// UdpReceiver: recvmmsg into the worker's buffer until the socket is empty, each message
// split into its datagrams (GRO hands several in one), each datagram's header checked against the
// flow and its sequence number accounted; the counters are published once per call.
std::size_t receive_slot(const FlowSettings& settings) noexcept {
  return settings.gro ? kGroSlot : std::max(settings.datagram, header_size(settings.wire));
}

UdpReceiver::UdpReceiver(StreamPlace& place, FlowSettings settings, FastPaths& paths, unsigned char* scratch)
    : UdpFlow(place, settings, paths),
      slot_(receive_slot(settings)),
      scratch_(scratch),
      iovecs_(settings.batch),
      messages_(settings.batch),
      control_(settings.batch * net::kReceiveControlSpace),
      offset_s_(settings.wire == Wire::testio ? static_cast<double>(settings.clock_offset_ns) * 1e-9 : 0) {}

void UdpReceiver::run() {
  // Without -w, room for a few milliseconds of bursts at 10 Gbit/s: a receiver descheduled for a
  // moment then drops nothing. The kernel grants at most net.core.rmem_max (208 KiB unless raised).
  if (!settings_.window) {
    const int asked = kDefaultReceiveBuffer;
    (void)::setsockopt(fd(), SOL_SOCKET, SO_RCVBUF, &asked, sizeof(asked));
  }
  if (settings_.gro)
    if (std::string refused = net::enable_gro(fd()); !refused.empty() && FastPaths::first(paths_.gro_refused))
      util::log_warn("{}: one datagram per receive", refused);
  last_arrival_ = engines::Clock::now();
  check_quiet();
  drain();
}

bool UdpReceiver::take_early(const unsigned char* data, std::size_t size) {
  if (!read_wire_header(settings_.wire, data, size, settings_.test_id, settings_.stream)) return false;
  take_datagram(data, size, realtime_s());
  publish();
  return true;
}

void UdpReceiver::wait_readable() {
  socket_.async_wait(asio::ip::udp::socket::wait_read, [this](const asio::error_code& error) {
    if (!error && !finished() && !closed_) drain();
  });
}

void UdpReceiver::drain() {
  for (int call = 0; call < kCallsBeforeYield; ++call) {
    for (std::size_t i = 0; i < messages_.size(); ++i) {
      iovecs_[i] = {scratch_ + i * slot_, slot_};
      msghdr& header = messages_[i].msg_hdr;
      header = {};
      header.msg_iov = &iovecs_[i];
      header.msg_iovlen = 1;
      header.msg_control = control_.data() + i * net::kReceiveControlSpace;
      header.msg_controllen = net::kReceiveControlSpace;
    }
    const int received = ::recvmmsg(fd(), messages_.data(), static_cast<unsigned>(messages_.size()), MSG_DONTWAIT, nullptr);
    if (received < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_readable();
        return;
      }
      if (errno == ECONNREFUSED || errno == EINTR) continue;  // an ICMP answer to an earlier hello
      util::log_error("UDP flow {}: receiving failed: {}", settings_.stream + 1, std::strerror(errno));
      finish(true);
      return;
    }
    const double now_s = realtime_s();
    for (int i = 0; i < received; ++i) take_message(messages_[static_cast<std::size_t>(i)], now_s);
    last_arrival_ = engines::Clock::now();
    publish();
    if (finished()) return;
  }
  asio::post(context_, [this] {
    if (!finished() && !closed_) drain();
  });
}

void UdpReceiver::take_message(const mmsghdr& message, double now_s) {
  const net::ReceiveNotes notes = net::read_receive_notes(message.msg_hdr);
  if (notes.drops) drops_ = std::max<std::uint64_t>(drops_, *notes.drops);
  const std::size_t length = message.msg_len;
  const unsigned char* data = static_cast<const unsigned char*>(message.msg_hdr.msg_iov->iov_base);
  if (message.msg_hdr.msg_flags & MSG_TRUNC) {  // larger than any datagram of this flow
    ++strays_;
    return;
  }
  const std::size_t segment = notes.gro_segment ? notes.gro_segment : std::max<std::size_t>(length, 1);
  for (std::size_t at = 0; at < length; at += segment) take_datagram(data + at, std::min(segment, length - at), now_s);
}

void UdpReceiver::take_datagram(const unsigned char* data, std::size_t size, double now_s) {
  std::optional<DatagramHeader> header = read_wire_header(settings_.wire, data, size, settings_.test_id, settings_.stream);
  if (!header) {
    ++strays_;
    return;
  }
  if (header->end) {
    sent_ = header->sequence;
    return;
  }
  const std::uint64_t distinct = sequence_.now().received;
  sequence_.on_datagram(header->sequence, header->sent_s(), now_s);
  if (sequence_.now().received > distinct) new_bytes_ += size;
  if (settings_.wire == Wire::testio) {
    const double delay_s = now_s + offset_s_ - header->sent_s();
    delays_.record(delay_s > 0 ? static_cast<std::uint64_t>(delay_s * 1e9) : 0);
  }
}

// The counters, once per call: the bytes of the distinct datagrams since the last, the figures.
void UdpReceiver::publish() {
  const stats::UdpSequence::Snapshot& now = sequence_.now();
  if (new_bytes_) counters_.record(new_bytes_, clock_.since_start(engines::Clock::now()));
  new_bytes_ = 0;
  auto set = [](std::atomic<std::uint64_t>& counter, std::uint64_t value) {
    counter.store(value, std::memory_order_relaxed);
  };
  set(counters_.datagrams, now.received);
  set(counters_.lost, now.lost);
  set(counters_.out_of_order, now.out_of_order);
  set(counters_.duplicates, now.duplicates);
  set(counters_.socket_drops, drops_);
  set(counters_.strays, strays_);
  set(counters_.jitter_ns, static_cast<std::uint64_t>(now.jitter_s * 1e9));
  if (sent_ && sequence_.at_end(*sent_).lost == 0) end_flow();  // everything arrived
}

void UdpReceiver::check_quiet() {
  timer_.expires_after(kQuietCheck);
  timer_.async_wait([this](const asio::error_code& error) {
    if (error || finished() || closed_) return;
    const auto quiet = engines::Clock::now() - last_arrival_;
    if ((sent_ && quiet >= kQuietAfterEnd) || (window_closed_ && quiet >= kQuietAfterPeerDone)) {
      end_flow();
      return;
    }
    check_quiet();
  });
}

void UdpReceiver::window_ended() noexcept { last_arrival_ = std::min(last_arrival_, engines::Clock::now()); }

// The flow's books close: with the sender's count, what never came is lost too.
void UdpReceiver::end_flow() {
  if (sent_) counters_.lost.store(sequence_.at_end(*sent_).lost, std::memory_order_relaxed);
  if (delays_.count()) {
    counters_.delay_p50_ns.store(delays_.percentile(50), std::memory_order_relaxed);
    counters_.delay_p90_ns.store(delays_.percentile(90), std::memory_order_relaxed);
    counters_.delay_p99_ns.store(delays_.percentile(99), std::memory_order_relaxed);
    counters_.delay_max_ns.store(std::max<std::uint64_t>(delays_.max(), 1), std::memory_order_relaxed);
  }
  finish(false);
}

// One side's flows. Owner: the lifecycle, on the control thread; the flows belong to their workers.
class UdpSide final : public TestSide {
 public:
  UdpSide(Side side, const spec::TestSpec& spec, Wire wire)
      : side_(side), spec_(spec), udp_(part_of<UdpSpec>(spec)), wire_(wire), layout_(DirectionLayout::of(spec.direction, spec.connections)),
        flows_(layout_.total(), nullptr), host_at_start_(net::read_udp_counters()) {}

  DirectionLayout layout() const override { return layout_; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { start.datagrams = true; }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<asio::ip::tcp::socket>) override {
    if (place.server->address().is_v4() && spec_.buffer > kMaxPayloadV4)
      throw std::runtime_error("-l " + std::to_string(spec_.buffer) +
                               " is more than a UDP datagram over IPv4 holds: at most 65507 bytes");
    const FlowSettings settings = settings_for(place);
    std::unique_ptr<UdpFlow> flow;
    if (layout_.sends_on(side_, place.index)) {
      flow = std::make_unique<UdpSender>(place, settings, paths_);
    } else {
      auto* scratch = reinterpret_cast<unsigned char*>(place.worker.scratch(settings.batch * receive_slot(settings)));
      flow = std::make_unique<UdpReceiver>(place, settings, paths_, scratch);
    }
    flows_[place.index] = flow.get();
    return flow;
  }

  std::string route_flow(std::uint32_t slot, asio::ip::udp::socket socket, engines::Worker& worker) override {
    if (slot >= flows_.size() || !flows_[slot])
      return "flow " + std::to_string(slot) + " is beyond the test's " + std::to_string(flows_.size()) + " flows";
    auto owned = std::make_shared<asio::ip::udp::socket>(std::move(socket));
    worker.post([flow = flows_[slot], owned] { flow->attach(std::move(*owned)); });
    return {};
  }

  void add_to_report(report::TestReport& report) const override {
    UdpSummary udp;
    udp.datagram = spec_.buffer;
    udp.rate_bps = spec_.rate_bps;
    udp.asked = udp_;
    if (paths_.gso_refused) udp.fallbacks.push_back("gso");
    if (paths_.gro_refused) udp.fallbacks.push_back("gro");
    if (paths_.drops_unknown) udp.fallbacks.push_back("socket_drops");
    const std::optional<net::UdpCounters> now = net::read_udp_counters();
    udp.host_counted = host_at_start_ && now;
    if (udp.host_counted) udp.host = *now - *host_at_start_;
    // Each direction of --bidir tells the same settings beside its own flows' loss.
    auto section = make_section(std::move(udp));
    report.sections.push_back(section);
    if (report.bidir_reverse) {
      auto reverse = std::make_shared<report::TestReport>(*report.bidir_reverse);
      reverse->sections.push_back(section);
      report.bidir_reverse = std::move(reverse);
    }
  }

 private:
  FlowSettings settings_for(const StreamPlace& place) const {
    const bool forward = layout_.is_forward(place.index);
    FlowSettings settings;
    settings.datagram = static_cast<std::size_t>(spec_.buffer);
    settings.batch = udp_.batch;
    settings.gso = udp_.gso;
    settings.gro = udp_.gro;
    settings.connected = udp_.connected || side_ == Side::server || wire_ != Wire::testio;
    settings.window = spec_.window;
    settings.tos = static_cast<std::uint8_t>(spec_.tos);
    settings.dont_fragment = udp_.dont_fragment;
    settings.rate_bps = spec_.rate_bps;
    settings.quota = stats::share_of_total(spec_.total_bytes, layout_.count(forward), layout_.index_in_direction(place.index));
    settings.test_id = place.test_id;
    settings.stream = place.number;
    settings.wire = wire_;
    settings.clock_offset_ns = side_ == Side::client ? place.clock_offset_ns : 0;
    return settings;
  }

  Side side_;
  spec::TestSpec spec_;
  UdpSpec udp_;
  Wire wire_;
  DirectionLayout layout_;
  FastPaths paths_;
  std::vector<UdpFlow*> flows_;  // by index; owned by their workers, which outlive the routing
  std::optional<net::UdpCounters> host_at_start_;
};

}  // namespace

std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Wire wire) {
  return std::make_unique<UdpSide>(side, spec, wire);
}

}  // namespace testio::workloads::udp
