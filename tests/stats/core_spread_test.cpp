#include "stats/core_spread.hpp"

#include <gtest/gtest.h>

namespace testio::stats {
namespace {

constexpr const char* kBefore =
    "cpu  100 0 50 1000 10 0 20 0 0 0\n"
    "cpu0 50 0 25 500 5 0 10 0 0 0\n"
    "cpu1 50 0 25 500 5 0 10 0 0 0\n"
    "intr 12345 1 2 3\n"
    "ctxt 99\n";
constexpr const char* kAfter =
    "cpu  300 0 50 1100 10 0 120 0 0 0\n"
    "cpu0 60 0 25 580 5 0 10 0 0 0\n"
    "cpu1 240 0 25 520 5 0 110 0 0 0\n";

TEST(CoreSpread, ParsesPerCpuLinesOnly) {
  std::vector<CpuTicks> cpus = parse_proc_stat(kBefore);
  ASSERT_EQ(cpus.size(), 2u);
  EXPECT_EQ(cpus[1].cpu, 1u);
  EXPECT_EQ(cpus[1].user, 50u);
  EXPECT_EQ(cpus[1].softirq, 10u);
  EXPECT_EQ(cpus[1].busy(), 85u);
}

TEST(CoreSpread, SharesShowTheBusyCore) {
  std::vector<CoreShare> shares = core_shares(parse_proc_stat(kBefore), parse_proc_stat(kAfter));
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0].busy, 10.0 / 90.0);
  EXPECT_DOUBLE_EQ(shares[0].softirq, 0.0);
  EXPECT_DOUBLE_EQ(shares[1].busy, 290.0 / 310.0);
  EXPECT_DOUBLE_EQ(shares[1].softirq, 100.0 / 310.0);
}

TEST(CoreSpread, SkipsMalformedAndShortLines) {
  EXPECT_TRUE(parse_proc_stat("cpux 1 2 3 4\ncpu0 1 2\ncpu\ncpu0 a b c d\n").empty());
  std::vector<CpuTicks> old_kernel = parse_proc_stat("cpu3 1 2 3 4");
  ASSERT_EQ(old_kernel.size(), 1u);
  EXPECT_EQ(old_kernel[0].cpu, 3u);
  EXPECT_EQ(old_kernel[0].softirq, 0u);
  EXPECT_TRUE(parse_proc_stat("cpu99999 1 2 3 4\n").empty());
}

TEST(CoreSpread, CpusMissingFromEitherSnapshotOrGoingBackAreLeftOut) {
  std::vector<CpuTicks> before = parse_proc_stat("cpu0 1 0 1 10\ncpu1 1 0 1 10\n");
  std::vector<CpuTicks> after = parse_proc_stat("cpu0 0 0 0 5\ncpu2 5 0 5 50\n");
  EXPECT_TRUE(core_shares(before, after).empty());
}

TEST(CoreSpread, ReadsAFakeRoot) {
  EXPECT_TRUE(read_proc_stat("/nonexistent-testio-root").empty());
  EXPECT_FALSE(read_proc_stat().empty());  // this machine's own /proc/stat
}

}  // namespace
}  // namespace testio::stats
