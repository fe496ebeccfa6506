// The UDP test datagram's header: written and read back, iperf3's layouts, strays refused.
#include "workloads/udp/udp.hpp"

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

TEST(Datagram, EndMarkerAndHelloRoundTrip) {
  std::array<unsigned char, kTestioHeader> bytes{};
  DatagramHeader last{1, 2, 1086, 3, 99};
  last.end = true;
  write_header(last, bytes.data());
  const std::optional<DatagramHeader> read = read_header(bytes.data(), bytes.size());
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->end);
  EXPECT_EQ(read->sequence, 1086u);
  std::array<unsigned char, kHelloSize> hello{};
  write_hello({0xabcdef0123456789ull, 5}, false, hello.data());
  const std::optional<FlowHello> said = read_hello(hello.data(), hello.size(), false);
  ASSERT_TRUE(said);
  EXPECT_EQ(said->test_id, 0xabcdef0123456789ull);
  EXPECT_EQ(said->stream, 5u);
  EXPECT_FALSE(read_hello(hello.data(), hello.size(), true));       // a hello is no answer
  EXPECT_FALSE(read_hello(hello.data(), hello.size() - 1, false));  // nor a short one a hello
}

TEST(Datagram, WiresCountAsTheirToolsDo) {
  std::array<unsigned char, kTestioHeader> bytes{};
  const DatagramHeader first{7, 8, 0, 2, 42};
  // iperf3's count starts at 1: testio's sequence 0 is its 1, and its 0 is a stray.
  write_wire_header(Wire::iperf3_32, first, bytes.data());
  EXPECT_EQ(bytes[11], 1);
  std::optional<DatagramHeader> read = read_wire_header(Wire::iperf3_32, bytes.data(), kIperf3Header32, 0, 0);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->sequence, 0u);
  bytes[11] = 0;
  EXPECT_FALSE(read_wire_header(Wire::iperf3_32, bytes.data(), kIperf3Header32, 0, 0));
  write_wire_header(Wire::iperf3_64, DatagramHeader{7, 8, 1ull << 40, 0, 0}, bytes.data());
  read = read_wire_header(Wire::iperf3_64, bytes.data(), kIperf3Header64, 0, 0);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->sequence, 1ull << 40);
  // testio's own wire: another test's or another flow's datagram is a stray.
  write_wire_header(Wire::testio, first, bytes.data());
  EXPECT_TRUE(read_wire_header(Wire::testio, bytes.data(), bytes.size(), 42, 2));
  EXPECT_FALSE(read_wire_header(Wire::testio, bytes.data(), bytes.size(), 43, 2));
  EXPECT_FALSE(read_wire_header(Wire::testio, bytes.data(), bytes.size(), 42, 1));
  EXPECT_EQ(header_size(Wire::testio), kTestioHeader);
  EXPECT_EQ(header_size(Wire::iperf3_32), kIperf3Header32);
}

}  // namespace
}  // namespace testio::workloads::udp
