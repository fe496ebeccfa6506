// A UDP receiver's view of one flow's sequence numbers (issue 17's accounting): datagrams
// received, lost (gaps), out of order (late, filling a gap), duplicates, and RFC 3550
// interarrival jitter. Late datagrams are told apart from duplicates within kWindow sequence
// numbers below the highest seen; older ones are counted as too late to tell. Fixed size, no
// allocation per datagram. Owner: the flow's receiving worker; readers take a Snapshot after it.
#pragma once

#include <array>
#include <cstdint>

namespace testio::stats {

class UdpSequence {
 public:
  static constexpr std::uint64_t kWindow = 4096;

  struct Snapshot {
    std::uint64_t received = 0;    // distinct datagrams (duplicates not counted)
    std::uint64_t lost = 0;        // sequence numbers below the highest seen, not (yet) received
    std::uint64_t out_of_order = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t too_late = 0;    // arrived more than kWindow behind: neither lost nor counted again
    double jitter_s = 0;           // RFC 3550 interarrival jitter
    std::uint64_t next = 0;        // the sequence number after the highest seen
  };

  // Datagram `sequence` (from 0), sent at `sent_s` by the sender's clock and received at
  // `arrived_s` by ours (the offset between the clocks cancels out of the jitter).
  void on_datagram(std::uint64_t sequence, double sent_s, double arrived_s) noexcept;
  // The sender says it sent `sent` datagrams in all: those never seen beyond the highest are lost too.
  Snapshot at_end(std::uint64_t sent) const noexcept;
  const Snapshot& now() const noexcept { return figures_; }

 private:
  bool seen(std::uint64_t sequence) const noexcept;
  void mark(std::uint64_t sequence) noexcept;
  void clear(std::uint64_t sequence) noexcept;

  Snapshot figures_;
  std::array<std::uint64_t, kWindow / 64> bits_{};  // bit s % kWindow: s seen, for s in [next - kWindow, next)
  bool have_transit_ = false;
  double last_transit_s_ = 0;
};

}  // namespace testio::stats
