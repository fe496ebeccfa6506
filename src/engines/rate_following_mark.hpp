// Socket marks that follow a stream's measured rate, so a bulk stream costs fewer wakeups and
// less queued memory without holding bytes back on a slow link.
//
// receive_wakeup (SO_RCVLOWAT): a receiver woken for every segment spends more on wakeups than on
// copying; on a fast link it catches up, sleeps, and is woken again for the next 64 KiB. The mark
// makes the kernel wake it once about a millisecond of data has queued. A fixed mark would hold
// bytes back on a slow link (shifting them into later interval figures), hence the rate.
//
// send_backlog (TCP_NOTSENT_LOWAT): a sender that keeps its whole send buffer full of unsent data
// gains nothing once the link is full, but with many connections that backlog is tens of MB that
// leave the caches before the kernel sends them. The mark keeps a millisecond of data unsent,
// never less than 1 MiB, so a single fast stream keeps its whole buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stats/counters.hpp"

namespace testio::engines {

// Whether receivers batch their wakeups when `workers` threads serve `streams` data connections.
// A worker with many connections rarely sleeps: while it reads one socket the others fill, so each
// epoll_wait already returns several ready sockets, and a mark only holds data back and costs the
// extra ACKs the kernel sends below it. Measured on loopback (2 workers): marks gain at 1, 4 and 8
// connections per worker and lose at 16 (docs/tuning.md).
inline constexpr std::uint32_t kMaxBatchingStreamsPerWorker = 8;
constexpr bool receivers_batch_wakeups(std::uint32_t streams, std::uint32_t workers) noexcept {
  return streams <= kMaxBatchingStreamsPerWorker * workers;
}

class RateFollowingMark {
 public:
  enum class Kind { receive_wakeup, send_backlog };

  // `call_size`: the most one call moves; a receive mark never exceeds it (a sender passes 0:
  // its mark has no such cap). `follow` false (--no-lowat): the kernel's default stays.
  RateFollowingMark(Kind kind, std::size_t call_size, bool follow) noexcept
      : kind_(kind), call_size_(call_size), follow_(follow) {}

  // After each call: `total` bytes moved so far on `fd`, at `since_start`. One comparison per
  // call; every kRateWindowNs it recomputes the mark and calls setsockopt only if it changed.
  void after_call(int fd, std::uint64_t total, stats::TestNanos since_start) noexcept {
    if (follow_ && since_start - window_start_ns_ >= kRateWindowNs) retune(fd, total, since_start);
  }

  // The mark for a measured rate, rounded down to a power of two so small changes in rate do not
  // each cost a setsockopt. receive_wakeup: at most a quarter of `receive_buffer` (SO_RCVBUF as
  // read back), and 1 (the kernel's default) where that leaves less than kMinWakeupBatch.
  static int mark_for(Kind kind, double bytes_per_second, std::size_t call_size,
                      std::size_t receive_buffer) noexcept;

  // Whether the mark follows the rate at all (false: --no-lowat, or a receiver among many).
  bool follows() const noexcept { return follow_; }
  static constexpr stats::TestNanos kRateWindowNs = 10'000'000;  // 10 ms
  static constexpr double kMarkSeconds = 0.001;
  // Below the mark the kernel acknowledges every segment at once; at a few Gbit/s per connection
  // those ACKs cost the sender more than the receiver's saved wakeups (docs/tuning.md).
  static constexpr std::size_t kMinWakeupBatch = 512 * 1024;
  static constexpr std::size_t kMaxWakeupBatch = 1 << 20;     // beyond this reads gain nothing more
  static constexpr std::size_t kMinSendBacklog = 1 << 20;
  static constexpr std::size_t kMaxSendBacklog = 1 << 30;     // the kernel's buffers cap it far below

 private:
  void retune(int fd, std::uint64_t total, stats::TestNanos since_start) noexcept;

  Kind kind_;
  std::size_t call_size_;
  bool follow_;
  stats::TestNanos window_start_ns_ = 0;
  std::uint64_t window_start_bytes_ = 0;
  int mark_ = 0;  // 0: not set yet, the kernel's default holds
};

}  // namespace testio::engines
