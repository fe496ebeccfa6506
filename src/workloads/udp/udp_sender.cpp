// A flow's sender: datagrams laid out in place (each with its header) in messages of one or many
// datagrams (GSO), several messages per sendmmsg, paced to absolute deadlines so the rate does not
// drift; then the end marker, which tells the receiver how many it sent.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include <asio/post.hpp>

#include "net/udp_socket.hpp"
#include "util/log.hpp"
#include "workloads/udp/datagram.hpp"
#include "workloads/udp/udp_flow.hpp"

namespace testio::workloads::udp {
namespace {

using namespace std::chrono_literals;

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
constexpr int kCallsBeforeYield = 16;              // then the worker's other flows get their turn

double realtime_s() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

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

}  // namespace

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
      if (FastPaths::first(paths_.gso_refused)) spdlog::warn("{}: one datagram per send", refused);
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
  spdlog::error("UDP flow {}: sending failed: {}", settings_.stream + 1, std::strerror(error));
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
    spdlog::warn("UDP_SEGMENT sends fail on this path ({}): one datagram per send", std::strerror(error));
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

}  // namespace testio::workloads::udp
