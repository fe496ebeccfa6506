#include "lifecycle/total_rate_cap.hpp"

#include <gtest/gtest.h>

namespace testio::lifecycle {
namespace {

constexpr std::uint64_t kMegabit = 125'000;  // bytes in one Mbit

TEST(TotalRateCap, AWindowAboveTheCapEndsTheTestOnceItIsFull) {
  TotalRateCap cap(100e6, 3, 1);  // 100 Mbit/s over 3 s, a sample a second
  EXPECT_EQ(cap.sample(500 * kMegabit), "");    // 500 Mbit in the first second: the window is not full yet
  EXPECT_EQ(cap.sample(500 * kMegabit), "");    // nothing in the second
  const std::string ended = cap.sample(500 * kMegabit);  // 500 Mbit over 3 s: 167 Mbit/s
  EXPECT_NE(ended.find("166.67 Mbit/s on average over its last 3 s"), std::string::npos) << ended;
  EXPECT_NE(ended.find("(--server-bitrate-limit)"), std::string::npos) << ended;
}

TEST(TotalRateCap, TheWindowSlides) {
  TotalRateCap cap(100e6, 2, 1);
  EXPECT_EQ(cap.sample(150 * kMegabit), "");
  EXPECT_EQ(cap.sample(150 * kMegabit), "");   // 150 Mbit over 2 s: 75 Mbit/s
  EXPECT_EQ(cap.sample(300 * kMegabit), "");   // the last 2 s: 150 Mbit
  EXPECT_NE(cap.sample(560 * kMegabit), "");   // the last 2 s: 410 Mbit
}

TEST(TotalRateCap, WindowZeroAveragesSinceTheStart) {
  TotalRateCap cap(100e6, 0, 1);
  EXPECT_NE(cap.sample(200 * kMegabit), "");   // the first second alone is over
  TotalRateCap steady(100e6, 0, 1);
  for (std::uint64_t second = 1; second <= 10; ++second) EXPECT_EQ(steady.sample(second * 90 * kMegabit), "");
}

TEST(TotalRateCap, WindowsShorterThanASecondAreSampledAtTheirOwnStep) {
  EXPECT_DOUBLE_EQ(TotalRateCap::step_for(0.5), 0.5);
  EXPECT_DOUBLE_EQ(TotalRateCap::step_for(5), 1);
  EXPECT_DOUBLE_EQ(TotalRateCap::step_for(0), 1);
  TotalRateCap cap(100e6, 0.5, 0.5);
  EXPECT_NE(cap.sample(60 * kMegabit), "");    // 60 Mbit in half a second: 120 Mbit/s
}

}  // namespace
}  // namespace testio::lifecycle
