#include "engines/rate_following_mark.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>

namespace testio::engines {

int RateFollowingMark::mark_for(Kind kind, double bytes_per_second, std::size_t call_size,
                                std::size_t receive_buffer) noexcept {
  const double per_mark = bytes_per_second * kMarkSeconds;
  const auto bounded = [per_mark](std::size_t low, std::size_t high) {
    return static_cast<int>(std::bit_floor(static_cast<std::size_t>(std::clamp(per_mark, double(low), double(high)))));
  };
  if (kind == Kind::send_backlog) return bounded(kMinSendBacklog, kMaxSendBacklog);
  // A quarter of the buffer: a mark above about half of it makes the kernel grow the buffer and
  // clamp the window to the mark (tcp_set_rcvlowat), which autotuning then only slowly undoes; a
  // window held at a few hundred KiB would keep a long path far below its rate.
  const std::size_t cap = std::min({kMaxWakeupBatch, call_size, receive_buffer / 4});
  if (per_mark < static_cast<double>(kMinWakeupBatch) || cap < kMinWakeupBatch) return 1;
  return bounded(kMinWakeupBatch, cap);
}

void RateFollowingMark::retune(int fd, std::uint64_t total, stats::TestNanos since_start) noexcept {
  const double seconds = static_cast<double>(since_start - window_start_ns_) * 1e-9;
  const double rate = static_cast<double>(total - window_start_bytes_) / seconds;
  // The buffer autotuning has granted so far, read only when the rate is worth a batch.
  int receive_buffer = 0;
  if (kind_ == Kind::receive_wakeup && rate * kMarkSeconds >= static_cast<double>(kMinWakeupBatch)) {
    socklen_t length = sizeof receive_buffer;
    if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, &length) != 0) receive_buffer = 0;
  }
  const int mark = mark_for(kind_, rate, call_size_, static_cast<std::size_t>(receive_buffer));
  window_start_ns_ = since_start;
  window_start_bytes_ = total;
  if (mark == mark_) return;
  // A refusal leaves the kernel's default: slower, never wrong.
  const bool set = kind_ == Kind::receive_wakeup
                       ? ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark) == 0
                       : ::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &mark, sizeof mark) == 0;
  if (set) mark_ = mark;
}

}  // namespace testio::engines
