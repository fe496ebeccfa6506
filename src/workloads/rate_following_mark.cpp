#include "workloads/rate_following_mark.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>

namespace testio::workloads {

int RateFollowingMark::mark_for(Kind kind, double bytes_per_second, std::size_t call_size) noexcept {
  const double per_mark = bytes_per_second * kMarkSeconds;
  const auto bounded = [per_mark](std::size_t low, std::size_t high) {
    return static_cast<int>(std::bit_floor(static_cast<std::size_t>(std::clamp(per_mark, double(low), double(high)))));
  };
  if (kind == Kind::send_backlog) return bounded(kMinSendBacklog, kMaxSendBacklog);
  const std::size_t cap = std::min(kMaxWakeupBatch, call_size);
  if (per_mark < static_cast<double>(kMinWakeupBatch) || cap < kMinWakeupBatch) return 1;
  return bounded(kMinWakeupBatch, cap);
}

// A receive mark above about half the receive buffer makes the kernel grow the buffer and clamp
// the window to the mark (tcp_set_rcvlowat), which autotuning then only slowly undoes: a window
// capped at a few hundred KiB would hold a long path far below its rate. A quarter of the buffer
// autotuning has already granted never does.
int RateFollowingMark::within_receive_buffer(int fd, int mark) noexcept {
  int buffer = 0;
  socklen_t length = sizeof buffer;
  if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, &length) != 0) return 1;
  const int quarter = buffer / 4;
  if (mark <= quarter) return mark;
  return quarter >= static_cast<int>(kMinWakeupBatch) ? static_cast<int>(std::bit_floor(static_cast<unsigned>(quarter))) : 1;
}

void RateFollowingMark::retune(int fd, std::uint64_t total, stats::TestNanos since_start) noexcept {
  const double seconds = static_cast<double>(since_start - window_start_ns_) * 1e-9;
  int mark = mark_for(kind_, static_cast<double>(total - window_start_bytes_) / seconds, call_size_);
  if (kind_ == Kind::receive_wakeup && mark > 1) mark = within_receive_buffer(fd, mark);
  window_start_ns_ = since_start;
  window_start_bytes_ = total;
  if (mark == mark_) return;
  // A refusal leaves the kernel's default: slower, never wrong.
  const bool set = kind_ == Kind::receive_wakeup
                       ? ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark) == 0
                       : ::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &mark, sizeof mark) == 0;
  if (set) mark_ = mark;
}

}  // namespace testio::workloads
