// Latency under load's pure parts: the phases a composed test's spans make, the figures of a set of
// delays (nearest-rank percentiles, the draft's trimmed mean, RPM), a probe datagram both ways, and
// the rules of the latency workload's spec.
#include <gtest/gtest.h>

#include "workloads/latency/latency.hpp"
#include "workloads/part.hpp"
#include "workloads/registry.hpp"

namespace testio::workloads::latency {
namespace {

spec::TestSpec probes(double window_s) {
  spec::TestSpec part;
  part.workload = "latency";
  part.connections = 3;
  part.duration_s = window_s;
  return part;
}

spec::TestSpec load(spec::Direction direction, double begins_s, double ends_s, double window_s) {
  spec::TestSpec part;
  part.direction = direction;
  part.begins_s = begins_s;
  part.ends_s = ends_s;
  part.duration_s = window_s;
  return part;
}

TEST(LatencyPhases, FollowWhereEachLoadRuns) {
  const spec::TestSpec test = spec::composed({load(spec::Direction::reverse, 4, 8, 20),
                                              load(spec::Direction::forward, 8, 12, 20),
                                              load(spec::Direction::bidir, 12, 16, 20), probes(20)});
  const std::vector<Phase> phases = phases_of(test);
  ASSERT_EQ(phases.size(), 5u);
  const char* names[] = {"idle", "download", "upload", "bidir", "idle"};
  for (std::size_t k = 0; k < phases.size(); ++k) {
    EXPECT_EQ(phases[k].name, names[k]);
    EXPECT_DOUBLE_EQ(phases[k].begins_s, 4.0 * static_cast<double>(k));
    EXPECT_DOUBLE_EQ(phases[k].ends_s, 4.0 * static_cast<double>(k + 1));
  }
  EXPECT_EQ(phases[1].loads, std::vector<std::size_t>{0});
  EXPECT_EQ(phases[3].loads, std::vector<std::size_t>{2});
  EXPECT_TRUE(phases[4].loads.empty());
}

TEST(LatencyPhases, ALoadBesideTheProbesAfterAnIdleSpell) {
  spec::TestSpec first = load(spec::Direction::forward, 2, 0, 12);
  const std::vector<Phase> phases = phases_of(spec::composed({first, probes(12)}));
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].name, "idle");
  EXPECT_EQ(phases[1].name, "upload");
  EXPECT_DOUBLE_EQ(phases[1].ends_s, 12);
}

TEST(LatencyFigures, PercentilesTrimmedMeanAndRpm) {
  std::vector<std::uint64_t> delays;
  for (std::uint64_t ms = 1; ms <= 100; ++ms) delays.push_back(ms * 1'000'000);
  const DelayFigures figures = delay_figures(delays);
  EXPECT_EQ(figures.count, 100u);
  EXPECT_DOUBLE_EQ(figures.p50_ms, 50);
  EXPECT_DOUBLE_EQ(figures.p90_ms, 90);
  EXPECT_DOUBLE_EQ(figures.p99_ms, 99);
  EXPECT_DOUBLE_EQ(figures.max_ms, 100);
  EXPECT_DOUBLE_EQ(figures.trimmed_mean_ms, 48);  // the lowest 95: 1..95
  EXPECT_DOUBLE_EQ(figures.rpm(), 1250);
  EXPECT_DOUBLE_EQ(figures.cdf_ms.front(), 1);    // the minimum
  EXPECT_DOUBLE_EQ(figures.cdf_ms[7], 50);        // kCdfPercents[7] is the median
  EXPECT_DOUBLE_EQ(figures.cdf_ms.back(), 100);   // the maximum
  std::vector<std::uint64_t> none;
  EXPECT_EQ(delay_figures(none).rpm(), 0);
}

TEST(LatencyProbe, ReadsBackWhatWasWrittenAndNothingElse) {
  ProbeTimes times{7, 1'700'000'000'123'456'789ull, 42, 0, 0, -5000};
  unsigned char probe[kProbeSize];
  write_probe(times, 99, 3, probe);
  stamp_reply(11, 12, probe);
  const std::optional<ProbeTimes> read = read_probe(probe, sizeof probe, 99, 3);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->sequence, 7u);
  EXPECT_EQ(read->sent_ns, times.sent_ns);
  EXPECT_EQ(read->sent_mono_ns, 42u);
  EXPECT_EQ(read->received_ns, 11u);
  EXPECT_EQ(read->replied_ns, 12u);
  EXPECT_EQ(read->offset_ns, -5000);
  EXPECT_FALSE(read_probe(probe, sizeof probe, 98, 3));  // another test's
  EXPECT_FALSE(read_probe(probe, sizeof probe, 99, 4));  // another flow's
  EXPECT_FALSE(read_probe(probe, kProbeSize - 1, 99, 3));
}

TEST(LatencySpec, RulesNameTheOption) {
  spec::TestSpec spec = probes(10);
  EXPECT_NO_THROW(workloads::check(spec, {}));
  LatencySpec latency;
  latency.interval_us = 500;
  set_part(spec, latency);
  EXPECT_THROW(workloads::check(spec, {}), spec::SpecError);
  latency = LatencySpec{};
  latency.connect = false;
  set_part(spec, latency);
  EXPECT_THROW(workloads::check(spec, {}), spec::SpecError);  // 2 kinds, 3 connections
  spec.connections = 2;
  EXPECT_NO_THROW(workloads::check(spec, {}));
}

}  // namespace
}  // namespace testio::workloads::latency
