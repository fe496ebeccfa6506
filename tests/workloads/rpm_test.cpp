// --rpm's pure parts: the draft's trimmed mean, the meter's stability and RPM from known probe
// times, and the /.well-known/nq configuration read from untrusted text.
#include <gtest/gtest.h>

#include "workloads/rpm/rpm.hpp"

namespace testio::workloads::rpm {
namespace {

TEST(RpmMeter, TrimmedMeanLeavesOutTheHighestTwentieth) {
  std::vector<double> values;
  for (int i = 1; i <= 20; ++i) values.push_back(i);
  values.back() = 1000;  // the one straggler of twenty
  EXPECT_DOUBLE_EQ(trimmed_mean(values), 10);
  EXPECT_EQ(trimmed_mean({}), 0);
}

TEST(RpmMeter, SteadyIntervalsAreStableAndGiveTheDraftsRpm) {
  RpmMeter meter(/*tls=*/true);
  bool stable = false;
  int intervals = 0;
  while (!stable && intervals < 20) {
    for (int probe = 0; probe < 10; ++probe) {
      meter.foreign({1.0, 2.0, 3.0});  // tcp, tls, http: foreign 2 ms on average
      meter.self(6.0);
    }
    stable = meter.close_interval(1.0, 125'000'000);  // 1 Gbit/s
    ++intervals;
  }
  EXPECT_TRUE(stable);
  EXPECT_EQ(intervals, 7);  // four intervals to a moving average, four averages to stability
  const DirectionResult result = meter.result("download", 7, 4);
  EXPECT_DOUBLE_EQ(result.rpm, 60'000 / ((2.0 + 6.0) / 2));
  EXPECT_DOUBLE_EQ(result.goodput_bps, 1e9);
  EXPECT_EQ(result.confidence(), "high");
  EXPECT_EQ(result.foreign_probes, 70u);
}

TEST(RpmMeter, AGrowingLoadIsNotStable) {
  RpmMeter meter(/*tls=*/false);
  for (int i = 1; i <= 10; ++i) {
    meter.foreign({1.0, 0.0, 1.0});
    meter.self(1.0);
    EXPECT_FALSE(meter.close_interval(1.0, static_cast<std::uint64_t>(i) * 50'000'000));
  }
  EXPECT_FALSE(meter.result("download", 10, 10).goodput_stable);
}

TEST(NqConfig, ReadsTheUrlsOrSaysWhyNot) {
  std::string why;
  const auto urls = parse_nq_config(
      R"({"version":1,"urls":{"large_https_download_url":"https://a/l","small_https_download_url":"https://a/s"}})", why);
  ASSERT_TRUE(urls);
  EXPECT_EQ(urls->large, "https://a/l");
  EXPECT_EQ(urls->small, "https://a/s");
  EXPECT_TRUE(urls->upload.empty());
  EXPECT_FALSE(parse_nq_config("{\"urls\":{\"large_https_download_url\":\"file:///etc/passwd\"}}", why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(parse_nq_config("not json", why));
  EXPECT_TRUE(is_nq_config_url("https://host/.well-known/nq"));
  EXPECT_FALSE(is_nq_config_url("https://host/large.bin"));
}

}  // namespace
}  // namespace testio::workloads::rpm
