// The clocks' offset from one control round trip, as NTP estimates it.
#include "stats/peer_clock.hpp"

#include <gtest/gtest.h>

namespace testio::stats {
namespace {

TEST(PeerClock, OffsetAndBoundFromOneRoundTrip) {
  // The server's clock is 5 ms ahead; 100 us each way; the server took 300 us to answer.
  const std::uint64_t sent = 1'000'000'000, received = sent + 100'000 + 5'000'000, replied = received + 300'000,
                      answered = sent + 100'000 + 300'000 + 100'000;
  const PeerClock clock = PeerClock::estimated_from(sent, received, replied, answered);
  EXPECT_EQ(clock.kind, PeerClock::Kind::estimated);
  EXPECT_EQ(clock.offset_ns, 5'000'000);
  EXPECT_EQ(clock.error_bound_ns, 100'000u);  // half the round trip less the server's time
  // Behind, and asymmetric paths: the truth stays within the bound.
  const PeerClock behind = PeerClock::estimated_from(sent, sent + 50'000 - 2'000'000, sent + 60'000 - 2'000'000,
                                                     sent + 60'000 + 150'000);
  EXPECT_LE(std::abs(behind.offset_ns - (-2'000'000)), static_cast<std::int64_t>(behind.error_bound_ns));
  EXPECT_STREQ(behind.name(), "estimated");
}

TEST(PeerClock, AnOlderServerGivesNoTimes) {
  EXPECT_FALSE(PeerClock::estimated_from(10, 0, 0, 20).known());
  EXPECT_FALSE(PeerClock::estimated_from(10, 30, 20, 40).known());  // replied before it received
  EXPECT_GT(realtime_ns(), 1'700'000'000'000'000'000ull);           // after 2023, in ns
}

}  // namespace
}  // namespace testio::stats
