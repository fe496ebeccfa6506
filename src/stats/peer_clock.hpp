// How this side's clock relates to its peer's, for one-way delays: the same clock (one host), an
// offset estimated from one control round trip (within half of it), or not known. Plain value.
#pragma once

#include <cstdint>

namespace testio::stats {

struct PeerClock {
  enum class Kind { unknown, shared, estimated };
  Kind kind = Kind::unknown;
  std::int64_t offset_ns = 0;        // the server's clock less the client's
  std::uint64_t error_bound_ns = 0;  // |the true offset - offset_ns| is at most this

  bool known() const noexcept { return kind != Kind::unknown; }
  const char* name() const noexcept;
  // NTP's estimate from one round trip: the client sent at `sent_ns` and had the answer at
  // `answered_ns` (its clock); the server had the request at `received_ns` and answered at
  // `replied_ns` (its clock). Unknown when the server gave no times.
  static PeerClock estimated_from(std::uint64_t sent_ns, std::uint64_t received_ns, std::uint64_t replied_ns,
                                  std::uint64_t answered_ns) noexcept;
};

// CLOCK_REALTIME in ns since the epoch: what datagram headers carry.
std::uint64_t realtime_ns() noexcept;

}  // namespace testio::stats
