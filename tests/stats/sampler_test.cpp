#include "stats/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/summary.hpp"

namespace testio::stats {
namespace {

std::vector<double> boundaries(const IntervalSchedule& schedule, double until) {
  std::vector<double> ticks;
  double previous = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    double next = schedule.next_after(previous);
    if (std::isinf(next) || next > until) break;
    ticks.push_back(next);
    previous = next;
  }
  return ticks;
}

TEST(IntervalSchedule, PlainSeconds) {
  EXPECT_EQ(boundaries(IntervalSchedule(1, 0), 4), (std::vector<double>{1, 2, 3, 4}));
}

TEST(IntervalSchedule, OmitBoundaryIsItsOwnTickAndIntervalsRestartFromIt) {
  EXPECT_EQ(boundaries(IntervalSchedule(1, 1.5), 4), (std::vector<double>{1, 1.5, 2.5, 3.5}));
  IntervalSchedule schedule(1, 1.5);
  EXPECT_TRUE(schedule.omitted(0));
  EXPECT_TRUE(schedule.omitted(1));
  EXPECT_FALSE(schedule.omitted(1.5));
}

TEST(IntervalSchedule, NoIntervalsStillMarksTheOmitBoundary) {
  EXPECT_EQ(boundaries(IntervalSchedule(0, 2), 100), (std::vector<double>{2}));
  EXPECT_TRUE(boundaries(IntervalSchedule(0, 0), 100).empty());
}

TEST(IntervalSchedule, FractionsDoNotDrift) {
  std::vector<double> ticks = boundaries(IntervalSchedule(0.1, 0), 100);
  ASSERT_EQ(ticks.size(), 1000u);
  EXPECT_NEAR(ticks.back(), 100.0, 1e-9);
}

TEST(Sampler, TakesDifferencesWithoutResettingCounters) {
  StreamCounters counters[2];
  Sampler sampler(counters, {-1, -1});
  counters[0].record(100, 1);
  counters[1].record(7, 1);
  IntervalRecord first = sampler.take(0, 1, true);
  counters[0].record(50, 2);
  IntervalRecord second = sampler.take(1, 2, false);
  EXPECT_EQ(first.bytes(), 107u);
  EXPECT_TRUE(first.omitted);
  EXPECT_EQ(second.streams[0].bytes, 50u);
  EXPECT_EQ(second.streams[1].bytes, 0u);
  EXPECT_EQ(second.streams[0].calls, 1u);
  EXPECT_EQ(counters[0].bytes.load(), 150u);  // untouched by the reader
  EXPECT_FALSE(second.streams[0].tcp.valid);
}

TEST(ExcludingOmitted, SubtractsOmittedIntervalsAndMovesTheStart) {
  std::vector<StreamFigures> totals = {{1000, 10, 0, 3, false}};
  IntervalRecord omitted{0, 1, true, {{400, 4, {}}}, {}, {}};
  IntervalRecord kept{1, 3, false, {{600, 6, {}}}, {}, {}};
  std::vector<StreamFigures> summary = excluding_omitted(totals, {omitted, kept});
  EXPECT_EQ(summary[0].bytes, 600u);
  EXPECT_EQ(summary[0].calls, 6u);
  EXPECT_DOUBLE_EQ(summary[0].start_s, 1);
  EXPECT_EQ(excluding_omitted(totals, {kept})[0].bytes, 1000u);
}

TEST(Balance, JainIsOneWhenEqualAndOneOverNWhenOneCarriesAll) {
  Balance equal = balance_of({5, 5, 5, 5});
  EXPECT_DOUBLE_EQ(equal.jain, 1.0);
  EXPECT_DOUBLE_EQ(equal.stddev, 0.0);
  Balance skewed = balance_of({8, 0, 0, 0});
  EXPECT_DOUBLE_EQ(skewed.jain, 0.25);
  EXPECT_DOUBLE_EQ(skewed.max, 8);
  EXPECT_DOUBLE_EQ(skewed.min, 0);
  EXPECT_DOUBLE_EQ(balance_of({1, 3}).stddev, 1.0);
  EXPECT_DOUBLE_EQ(balance_of({}).jain, 0.0);
}

TEST(CpuUsage, PercentOfACoreAndSecondsPerGigabyte) {
  CpuUsage usage = cpu_usage({0.5, 1.5}, 4.0, 10'000'000'000);
  EXPECT_DOUBLE_EQ(usage.user_percent, 12.5);
  EXPECT_DOUBLE_EQ(usage.system_percent, 37.5);
  EXPECT_DOUBLE_EQ(usage.total_percent, 50.0);
  EXPECT_DOUBLE_EQ(usage.seconds_per_gb, 0.2);
  EXPECT_EQ(cpu_usage({1, 1}, 0, 0).total_percent, 0.0);
  CpuTimes now = CpuTimes::now();
  EXPECT_GE(now.user_s + now.system_s, 0.0);
}

TEST(TcpSummary, OverValidSamplesOnly) {
  IntervalRecord a{0, 1, false, {{0, 0, {}}}, {}, {}};
  a.streams[0].tcp.valid = true;
  a.streams[0].tcp.rtt_us = 100;
  a.streams[0].tcp.snd_cwnd_bytes = 5000;
  a.streams[0].tcp.total_retrans = 2;
  IntervalRecord b = a;
  b.streams[0].tcp.rtt_us = 300;
  b.streams[0].tcp.snd_cwnd_bytes = 1000;
  b.streams[0].tcp.total_retrans = 5;
  IntervalRecord invalid{2, 3, false, {{0, 0, {}}}, {}, {}};
  TcpSummary summary = tcp_summary({a, b, invalid}, 0);
  ASSERT_TRUE(summary.valid);
  EXPECT_EQ(summary.min_rtt_us, 100u);
  EXPECT_EQ(summary.max_rtt_us, 300u);
  EXPECT_DOUBLE_EQ(summary.mean_rtt_us, 200);
  EXPECT_EQ(summary.max_snd_cwnd, 5000u);
  EXPECT_EQ(summary.retransmits, 5u);
  EXPECT_FALSE(tcp_summary({invalid}, 0).valid);
}

}  // namespace
}  // namespace testio::stats
