#include "util/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "util/pattern.hpp"

namespace testio::util {
namespace {

// The generated payload is its generator stepped once a byte, whatever the size: the lanes that
// compute it must neither skip nor repeat a step, at a lane boundary or in the tail.
TEST(Pattern, IsTheGeneratorSteppedOnceAByte) {
  for (const std::size_t size : {0u, 1u, 31u, 32u, 33u, 1000u, 65543u, 2097152u}) {
    std::vector<char> expected(size), made(size);
    std::uint32_t state = 0x9e3779b9u;
    for (char& byte : expected) {
      state = state * 1664525u + 1013904223u;
      byte = static_cast<char>(state >> 24);
    }
    fill_pattern(made.data(), size);
    EXPECT_EQ(made, expected) << size << " bytes";
  }
}

TEST(ParseSize, AcceptsPlainBinaryAndDecimalForms) {
  EXPECT_EQ(parse_size("2097152", "-l"), 2097152u);
  EXPECT_EQ(parse_size("512K", "-l"), 512u * 1024);
  EXPECT_EQ(parse_size("2M", "-l"), 2u << 20);
  EXPECT_EQ(parse_size("2MiB", "-l"), 2u << 20);
  EXPECT_EQ(parse_size("2m", "-l"), 2u << 20);
  EXPECT_EQ(parse_size("1G", "-n"), 1ull << 30);
  EXPECT_EQ(parse_size("2MB", "-l"), 2000000u);
  EXPECT_EQ(parse_size("1.5K", "-l"), 1536u);
  EXPECT_EQ(parse_size("100B", "-l"), 100u);
  EXPECT_EQ(parse_size("0", "-w"), 0u);
}

TEST(ParseSize, RejectsGarbageWithTheOptionName) {
  for (const char* bad : {"", "M", "2X", "two", "2 M", "2MiBs", "1e400", "--1"}) {
    try {
      parse_size(bad, "-l");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("-l"), std::string::npos) << error.what();
    }
  }
}

TEST(ParseRate, DecimalSuffixes) {
  EXPECT_DOUBLE_EQ(parse_rate("500M", "-b"), 500e6);
  EXPECT_DOUBLE_EQ(parse_rate("2.5g", "-b"), 2.5e9);
  EXPECT_DOUBLE_EQ(parse_rate("1000", "-b"), 1000);
  EXPECT_DOUBLE_EQ(parse_rate("1T", "-b"), 1e12);
  for (const char* bad : {"", "0", "-1G", "fast", "1X", "G"}) EXPECT_THROW(parse_rate(bad, "-b"), UsageError) << bad;
}

TEST(CpuList, RangesAndSinglesRoundTrip) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11", "-A"), (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("1", "-A"), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  for (const char* bad : {"", ",", "1,", "3-1", "a", "1-", "-2", "1024", "0-5000"})
    EXPECT_THROW(parse_cpu_list(bad, "-A"), UsageError) << bad;
}

TEST(ParseSize, RejectsNegativeAndHuge) {
  EXPECT_THROW(parse_size("-2M", "-l"), UsageError);
  EXPECT_THROW(parse_size("20000000T", "-l"), UsageError);
}

TEST(ParseSeconds, AcceptsDecimalsRejectsNegative) {
  EXPECT_DOUBLE_EQ(parse_seconds("10", "-t"), 10.0);
  EXPECT_DOUBLE_EQ(parse_seconds("0.5", "-t"), 0.5);
  EXPECT_THROW(parse_seconds("-1", "-t"), UsageError);
  EXPECT_THROW(parse_seconds("ten", "-t"), UsageError);
  EXPECT_THROW(parse_seconds("inf", "-t"), UsageError);
  EXPECT_THROW(parse_seconds("nan", "-t"), UsageError);
}

TEST(ParseCount, WholeNumbersOnly) {
  EXPECT_EQ(parse_count("32", "N"), 32u);
  EXPECT_THROW(parse_count("-1", "N"), UsageError);
  EXPECT_THROW(parse_count("3.5", "N"), UsageError);
  EXPECT_THROW(parse_count("99999999999999999999999", "N"), UsageError);
}

TEST(RateMath, BitsPerSecondIsDecimalAndSafeAtZero) {
  EXPECT_DOUBLE_EQ(bits_per_second(1'250'000'000, 1.0), 10e9);
  EXPECT_DOUBLE_EQ(bits_per_second(66'601'000'000, 30.05), 66'601'000'000 * 8.0 / 30.05);
  EXPECT_EQ(bits_per_second(100, 0.0), 0.0);
}

TEST(Format, ScalesRatesBytesAndSizes) {
  EXPECT_EQ(format_rate(17.31e9), "17.31 Gbit/s");
  EXPECT_EQ(format_rate(950.5e6), "950.50 Mbit/s");
  EXPECT_EQ(format_rate(12), "12 bit/s");
  EXPECT_EQ(format_bytes(66'601'000'000), "66.60 GB");
  EXPECT_EQ(format_size(2u << 20), "2 MiB");
  EXPECT_EQ(format_size(1000), "1000 B");
}

TEST(Format, ForcedRateUnits) {
  EXPECT_EQ(format_rate(17.31e9, 'm'), "17310.00 Mbit/s");
  EXPECT_EQ(format_rate(8e9, 'G'), "1.00 GByte/s");
  EXPECT_EQ(format_rate(8e6, 'K'), "1000.00 KByte/s");
  EXPECT_EQ(format_rate(1e3, 'k'), "1.00 Kbit/s");
  EXPECT_EQ(format_rate(1e3, 'a'), "1.00 Kbit/s");
  EXPECT_TRUE(is_rate_unit('g'));
  EXPECT_FALSE(is_rate_unit('x'));
}

}  // namespace
}  // namespace testio::util
