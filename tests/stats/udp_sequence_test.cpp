// A UDP flow's accounting: loss from gaps, late datagrams that fill them, duplicates, jitter.
#include "stats/udp_sequence.hpp"

#include <gtest/gtest.h>

namespace testio::stats {
namespace {

TEST(UdpSequence, InOrderIsAllReceived) {
  UdpSequence flow;
  for (std::uint64_t s = 0; s < 10; ++s) flow.on_datagram(s, 0.001 * static_cast<double>(s), 0.001 * static_cast<double>(s) + 0.5);
  const UdpSequence::Snapshot end = flow.at_end(10);
  EXPECT_EQ(end.received, 10u);
  EXPECT_EQ(end.lost, 0u);
  EXPECT_EQ(end.out_of_order, 0u);
  EXPECT_EQ(end.duplicates, 0u);
  EXPECT_DOUBLE_EQ(end.jitter_s, 0.0);  // the same transit time throughout, whatever the clocks' offset
}

TEST(UdpSequence, GapsAreLostUntilTheyArriveAndDuplicatesAreNotCountedTwice) {
  UdpSequence flow;
  for (std::uint64_t s : {0, 1, 4, 2, 4, 5}) flow.on_datagram(s, 0, 0);
  const UdpSequence::Snapshot now = flow.now();
  EXPECT_EQ(now.received, 5u);  // 0 1 4 2 5
  EXPECT_EQ(now.lost, 1u);      // 3
  EXPECT_EQ(now.out_of_order, 1u);
  EXPECT_EQ(now.duplicates, 1u);
  // The sender sent 8: 6 and 7 never came. Sent = received + lost, exactly.
  const UdpSequence::Snapshot end = flow.at_end(8);
  EXPECT_EQ(end.lost, 3u);
  EXPECT_EQ(end.received + end.lost, 8u);
}

TEST(UdpSequence, BeyondTheWindowIsTooLateAndAWideGapClearsIt) {
  UdpSequence flow;
  flow.on_datagram(0, 0, 0);
  flow.on_datagram(2 * UdpSequence::kWindow, 0, 0);  // a gap wider than the window
  EXPECT_EQ(flow.now().lost, 2 * UdpSequence::kWindow - 1);
  flow.on_datagram(1, 0, 0);  // far behind: neither lost-and-found nor a duplicate
  EXPECT_EQ(flow.now().too_late, 1u);
  flow.on_datagram(2 * UdpSequence::kWindow - 5, 0, 0);  // within the window: it fills its gap
  EXPECT_EQ(flow.now().out_of_order, 1u);
  EXPECT_EQ(flow.now().lost, 2 * UdpSequence::kWindow - 2);
  flow.on_datagram(2 * UdpSequence::kWindow - 5, 0, 0);
  EXPECT_EQ(flow.now().duplicates, 1u);
}

TEST(UdpSequence, JitterFollowsRfc3550) {
  UdpSequence flow;
  // Transit times 10, 12, 10 ms: |D| = 2 ms twice. J = 2/16, then J += (2 - J)/16.
  flow.on_datagram(0, 0.000, 0.010);
  flow.on_datagram(1, 0.001, 0.013);
  flow.on_datagram(2, 0.002, 0.012);
  const double first = 0.002 / 16;
  EXPECT_NEAR(flow.now().jitter_s, first + (0.002 - first) / 16, 1e-12);
}

}  // namespace
}  // namespace testio::stats
