// The UDP test datagram's header: written and read back, iperf3's layouts, strays refused.
#include "workloads/udp/datagram.hpp"

#include <array>

#include <gtest/gtest.h>

namespace testio::workloads::udp {
namespace {

TEST(Datagram, TestioHeaderRoundTripsInIperf3sLayout) {
  const DatagramHeader sent{1796127874, 999999, 0x0102030405060708ull, 7, 0xfeedfacecafebeefull};
  std::array<unsigned char, kTestioHeader> bytes{};
  write_header(sent, bytes.data());
  // The first 16 bytes are iperf3's 64-bit-counter header: big-endian sec, usec, sequence.
  EXPECT_EQ(bytes[0], 0x6b);
  EXPECT_EQ(bytes[8], 0x01);
  EXPECT_EQ(bytes[15], 0x08);
  EXPECT_EQ(bytes[16], 't');
  const std::optional<DatagramHeader> read = read_header(bytes.data(), bytes.size());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->sec, sent.sec);
  EXPECT_EQ(read->usec, sent.usec);
  EXPECT_EQ(read->sequence, sent.sequence);
  EXPECT_EQ(read->stream, 7u);
  EXPECT_EQ(read->test_id, sent.test_id);
  EXPECT_DOUBLE_EQ(read->sent_s(), 1796127874.999999);
  const std::optional<DatagramHeader> as_iperf3 = read_iperf3_header(bytes.data(), bytes.size(), true);
  ASSERT_TRUE(as_iperf3);
  EXPECT_EQ(as_iperf3->sequence, sent.sequence);
}

TEST(Datagram, StraysAreRefused) {
  std::array<unsigned char, kTestioHeader> bytes{};
  write_header(DatagramHeader{1, 2, 3, 4, 5}, bytes.data());
  EXPECT_FALSE(read_header(bytes.data(), kTestioHeader - 1));  // short
  std::array<unsigned char, kTestioHeader> foreign = bytes;
  foreign[17] = 'X';
  EXPECT_FALSE(read_header(foreign.data(), foreign.size()));  // no magic
  std::array<unsigned char, kTestioHeader> bad_usec = bytes;
  bad_usec[4] = 0xff;  // usec far above a million
  EXPECT_FALSE(read_header(bad_usec.data(), bad_usec.size()));
  EXPECT_FALSE(read_iperf3_header(bytes.data(), kIperf3Header32 - 1, false));
}

TEST(Datagram, Iperf3sThirtyTwoBitCounter) {
  std::array<unsigned char, kIperf3Header32> bytes{};
  write_iperf3_header(DatagramHeader{10, 20, 0x1'0000'0005ull}, false, bytes.data());
  const std::optional<DatagramHeader> read = read_iperf3_header(bytes.data(), bytes.size(), false);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->sequence, 5u);  // the counter wraps at 32 bits on the wire
  EXPECT_EQ(read->sec, 10u);
  EXPECT_EQ(read->usec, 20u);
}

}  // namespace
}  // namespace testio::workloads::udp
