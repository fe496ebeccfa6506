#include "stats/histogram.hpp"

#include <gtest/gtest.h>

#include <random>

namespace testio::stats {
namespace {

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram histogram;
  for (std::uint64_t v = 1; v <= 50; ++v) histogram.record(v);
  EXPECT_EQ(histogram.percentile(50), 25u);
  EXPECT_EQ(histogram.percentile(100), 50u);
  EXPECT_EQ(histogram.min(), 1u);
  EXPECT_DOUBLE_EQ(histogram.mean(), 25.5);
}

TEST(LatencyHistogram, BucketsCoverEveryValueWithinOneSixtyFourth) {
  std::mt19937_64 random(1);
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t value = random() >> (random() % 64);
    std::size_t bucket = LatencyHistogram::bucket_of(value);
    ASSERT_LT(bucket, LatencyHistogram::kBuckets);
    std::uint64_t top = LatencyHistogram::bucket_top(bucket);
    ASSERT_GE(top, value);
    ASSERT_LE(static_cast<double>(top - value), static_cast<double>(value) / 64.0 + 1) << value;
    if (bucket > 0) {
      ASSERT_LT(LatencyHistogram::bucket_top(bucket - 1), value) << value;
    }
  }
  EXPECT_EQ(LatencyHistogram::bucket_top(LatencyHistogram::bucket_of(UINT64_MAX)), UINT64_MAX);
}

TEST(LatencyHistogram, PercentilesOfAKnownDistribution) {
  LatencyHistogram histogram;
  for (std::uint64_t v = 1; v <= 100000; ++v) histogram.record(v * 1000);  // 1 us .. 100 ms
  auto near = [](std::uint64_t got, double want) { return std::abs(static_cast<double>(got) - want) <= want / 64.0; };
  EXPECT_TRUE(near(histogram.percentile(50), 50e6)) << histogram.percentile(50);
  EXPECT_TRUE(near(histogram.percentile(99), 99e6)) << histogram.percentile(99);
  EXPECT_TRUE(near(histogram.percentile(99.9), 99.9e6)) << histogram.percentile(99.9);
  EXPECT_EQ(histogram.percentile(100), 100000000u);
  EXPECT_EQ(histogram.max(), 100000000u);
}

TEST(LatencyHistogram, SummaryCdfRunsFromTheMinimumToTheMaximumThroughThePercentiles) {
  LatencyHistogram histogram;
  for (std::uint64_t v = 1; v <= 100000; ++v) histogram.record(v * 1000);
  const LatencySummary summary = summarize(histogram);
  EXPECT_EQ(summary.cdf_ns.front(), summary.min_ns);
  EXPECT_EQ(summary.cdf_ns.back(), summary.max_ns);
  for (std::size_t i = 1; i < summary.cdf_ns.size(); ++i) EXPECT_LE(summary.cdf_ns[i - 1], summary.cdf_ns[i]) << i;
  for (std::size_t i = 1; i + 1 < kCdfPercents.size(); ++i)
    EXPECT_EQ(summary.cdf_ns[i], histogram.percentile(kCdfPercents[i])) << kCdfPercents[i];
  EXPECT_EQ(summarize(LatencyHistogram()).cdf_ns.back(), 0u);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a, b, all;
  for (std::uint64_t v = 0; v < 1000; ++v) {
    (v % 2 ? a : b).record(v * 37);
    all.record(v * 37);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) EXPECT_EQ(a.percentile(p), all.percentile(p)) << p;
  EXPECT_EQ(a.min(), 0u);
  EXPECT_EQ(LatencyHistogram().percentile(50), 0u);
}

}  // namespace
}  // namespace testio::stats
