#include "stats/peer_clock.hpp"

#include <ctime>

namespace testio::stats {

const char* PeerClock::name() const noexcept {
  switch (kind) {
    case Kind::shared: return "shared";
    case Kind::estimated: return "estimated";
    case Kind::unknown: break;
  }
  return "unknown";
}

PeerClock PeerClock::estimated_from(std::uint64_t sent_ns, std::uint64_t received_ns, std::uint64_t replied_ns,
                                    std::uint64_t answered_ns) noexcept {
  PeerClock clock;
  if (received_ns == 0 || replied_ns < received_ns || answered_ns < sent_ns) return clock;
  const auto signed_ns = [](std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a - b); };
  clock.kind = Kind::estimated;
  // ((received - sent) + (replied - answered)) / 2: the server's time spent on the request cancels.
  clock.offset_ns = (signed_ns(received_ns, sent_ns) + signed_ns(replied_ns, answered_ns)) / 2;
  const std::uint64_t round_trip = answered_ns - sent_ns, at_server = replied_ns - received_ns;
  clock.error_bound_ns = round_trip > at_server ? (round_trip - at_server) / 2 : 0;
  return clock;
}

std::uint64_t realtime_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace testio::stats
