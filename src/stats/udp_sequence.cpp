#include "stats/udp_sequence.hpp"

#include <cmath>

namespace testio::stats {

bool UdpSequence::seen(std::uint64_t sequence) const noexcept {
  const std::uint64_t bit = sequence % kWindow;
  return (bits_[bit / 64] >> (bit % 64)) & 1u;
}

void UdpSequence::mark(std::uint64_t sequence) noexcept {
  const std::uint64_t bit = sequence % kWindow;
  bits_[bit / 64] |= std::uint64_t{1} << (bit % 64);
}

void UdpSequence::clear(std::uint64_t sequence) noexcept {
  const std::uint64_t bit = sequence % kWindow;
  bits_[bit / 64] &= ~(std::uint64_t{1} << (bit % 64));
}

void UdpSequence::on_datagram(std::uint64_t sequence, double sent_s, double arrived_s) noexcept {
  Snapshot& f = figures_;
  if (sequence >= f.next) {
    // New ground: the numbers skipped are lost until they turn up. Their bits leave the window's
    // far end as it moves, so a gap wider than the window clears it whole.
    const std::uint64_t gap = sequence - f.next;
    if (gap >= kWindow) {
      bits_.fill(0);
    } else {
      for (std::uint64_t s = f.next; s < sequence; ++s) clear(s);
    }
    f.lost += gap;
    clear(sequence);
    mark(sequence);
    f.next = sequence + 1;
    ++f.received;
  } else if (f.next - sequence > kWindow) {
    ++f.too_late;
    return;
  } else if (seen(sequence)) {
    ++f.duplicates;
    return;
  } else {
    mark(sequence);
    ++f.out_of_order;
    --f.lost;  // it was counted lost when the numbers passed it
    ++f.received;
  }
  // RFC 3550, 6.4.1: J += (|D| - J) / 16, D the change in transit time between datagrams.
  const double transit = arrived_s - sent_s;
  if (have_transit_) f.jitter_s += (std::fabs(transit - last_transit_s_) - f.jitter_s) / 16.0;
  last_transit_s_ = transit;
  have_transit_ = true;
}

UdpSequence::Snapshot UdpSequence::at_end(std::uint64_t sent) const noexcept {
  Snapshot end = figures_;
  if (sent > end.next) end.lost += sent - end.next;
  return end;
}

}  // namespace testio::stats
