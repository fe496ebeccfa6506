#include "stats/summary.hpp"

#include <gtest/gtest.h>

namespace testio::stats {
namespace {

TEST(Summary, SumsOverTheWholeWindow) {
  std::vector<StreamFigures> streams = {{1'000'000'000, 500, 0.0, 2.0, false},
                                        {3'000'000'000, 1500, 0.5, 4.0, false}};
  SideSummary sum = summarize(streams);
  EXPECT_EQ(sum.bytes, 4'000'000'000u);
  EXPECT_EQ(sum.calls, 2000u);
  EXPECT_DOUBLE_EQ(sum.seconds, 4.0);
  EXPECT_DOUBLE_EQ(sum.bits_per_second, 8e9);
  EXPECT_DOUBLE_EQ(sum.min_stream_bps, 4e9);
  EXPECT_DOUBLE_EQ(sum.max_stream_bps, 3e9 * 8 / 3.5);
  EXPECT_EQ(sum.failed_streams, 0u);
}

TEST(Summary, EmptyAndFailed) {
  EXPECT_EQ(summarize({}).bytes, 0u);
  SideSummary sum = summarize({{10, 1, 0, 0, true}});
  EXPECT_EQ(sum.failed_streams, 1u);
  EXPECT_EQ(sum.bits_per_second, 0.0);
}

TEST(Summary, BytesPerCall) {
  StreamFigures figures{2'000'000, 4, 0, 1, false};
  EXPECT_DOUBLE_EQ(figures.bytes_per_call(), 500'000.0);
  EXPECT_EQ(StreamFigures{}.bytes_per_call(), 0.0);
}

TEST(Counters, RecordIsCumulativeAndMarksFirstAndLast) {
  StreamCounters counters;
  counters.record(100, 5);
  counters.record(50, 9);
  StreamFigures figures = figures_from(counters, 0);
  EXPECT_EQ(figures.bytes, 150u);
  EXPECT_EQ(figures.calls, 2u);
  EXPECT_DOUBLE_EQ(figures.start_s, 5e-9);
  EXPECT_DOUBLE_EQ(figures.end_s, 9e-9);
}

TEST(ShareOfTotal, AddsUpExactly) {
  for (std::uint64_t total : {1ull, 7ull, 1000ull, 104857601ull}) {
    for (std::uint32_t n : {1u, 3u, 32u}) {
      std::uint64_t sum = 0;
      for (std::uint32_t i = 0; i < n; ++i) sum += share_of_total(total, n, i);
      EXPECT_EQ(sum, total) << total << " over " << n;
    }
  }
}

TEST(OffsetOfShare, SharesLieEndToEnd) {
  for (std::uint64_t total : {3ull, 1000ull, 104857601ull}) {
    for (std::uint32_t n : {1u, 3u, 32u}) {
      std::uint64_t expected = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(offset_of_share(total, n, i), expected) << total << " over " << n << ", stream " << i;
        expected += share_of_total(total, n, i);
      }
    }
  }
}

TEST(Summary, ReceiveZeroCopyShareAddsStreamsUpAndSurvivesOmission) {
  StreamCounters counters;
  counters.record(3000, 10);
  add_relaxed(counters.recv_zerocopy_bytes, 2000);
  add_relaxed(counters.recv_copied_bytes, 1000);
  std::vector<StreamFigures> streams = {figures_from(counters, 0), {}};
  streams[1].recv_copied_bytes = 1000;
  ReceiveZeroCopySummary sum = receive_zerocopy_summary(streams);
  EXPECT_EQ(sum.total(), 4000u);
  EXPECT_DOUBLE_EQ(sum.zero_copy_share(), 0.5);
  EXPECT_DOUBLE_EQ(ReceiveZeroCopySummary{}.zero_copy_share(), 0.0);  // no such mode: no share, no NaN
  IntervalRecord omitted;
  omitted.omitted = true;
  omitted.end_s = 1;
  omitted.streams.resize(2);
  omitted.streams[0].bytes = 500;
  EXPECT_EQ(receive_zerocopy_summary(excluding_omitted(streams, {omitted})).total(), 4000u);
}

}  // namespace
}  // namespace testio::stats
