// A flow's receiver: recvmmsg into the worker's buffer until the socket is empty, each message
// split into its datagrams (GRO hands several in one), each datagram's header checked against the
// flow and its sequence number accounted; the counters are published once per call.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <sys/socket.h>

#include <asio/post.hpp>

#include "net/udp_socket.hpp"
#include "util/log.hpp"
#include "workloads/udp/datagram.hpp"
#include "workloads/udp/udp_flow.hpp"

namespace testio::workloads::udp {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kGroSlot = 65536;     // a coalesced buffer holds up to 64 KiB
constexpr int kCallsBeforeYield = 16;       // then the worker's other flows get their turn
constexpr auto kQuietCheck = 50ms;
constexpr auto kQuietAfterEnd = 200ms;      // after the end marker: what is still missing is lost
constexpr auto kQuietAfterPeerDone = 250ms; // after the client said it is done
constexpr int kDefaultReceiveBuffer = 4 << 20;

double realtime_s() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

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
      spdlog::warn("{}: one datagram per receive", refused);
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
      spdlog::error("UDP flow {}: receiving failed: {}", settings_.stream + 1, std::strerror(errno));
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

}  // namespace testio::workloads::udp
