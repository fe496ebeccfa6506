// The host's UDP counters from fake /proc/net/snmp and snmp6 files, and from this host's own.
#include "net/udp_counters.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace testio::net {
namespace {

namespace fs = std::filesystem;

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("testio-proc-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "net");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(root_ / "net" / name) << text; }
  fs::path root_;
};

TEST_F(FakeProc, AddsIpv4AndIpv6) {
  write("snmp",
        "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
        "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
        "Udp: 100 2 7 90 5 1 0 0 0\n"
        "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
        "UdpLite: 9 9 9 9 9 9 9 9 9\n");
  write("snmp6", "Ip6InReceives 4\nUdp6InDatagrams                 \t10\nUdp6InErrors 3\nUdp6RcvbufErrors 2\n");
  std::optional<UdpCounters> counters = read_udp_counters(root_.string());
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->in_datagrams, 110u);
  EXPECT_EQ(counters->in_errors, 10u);
  EXPECT_EQ(counters->rcvbuf_errors, 7u);
  EXPECT_EQ(counters->sndbuf_errors, 1u);
  EXPECT_EQ(counters->no_ports, 2u);
}

TEST_F(FakeProc, NoIpv6IsIpv4AloneAndBrokenRowsAreNoReading) {
  write("snmp", "Udp: InDatagrams InErrors RcvbufErrors\nUdp: 4 1 1\n");
  std::optional<UdpCounters> counters = read_udp_counters(root_.string());
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->in_datagrams, 4u);
  EXPECT_EQ(counters->rcvbuf_errors, 1u);
  write("snmp", "Udp: InDatagrams InErrors\nUdp: 4 x1\n");
  EXPECT_FALSE(read_udp_counters(root_.string()));
  write("snmp", "Udp: InDatagrams InErrors\nUdp: 4\n");
  EXPECT_FALSE(read_udp_counters(root_.string()));
  EXPECT_FALSE(read_udp_counters((root_ / "nowhere").string()));
}

TEST(UdpCounters, ThisHostHasThem) {
  std::optional<UdpCounters> before = read_udp_counters();
  ASSERT_TRUE(before);
  std::optional<UdpCounters> after = read_udp_counters();
  ASSERT_TRUE(after);
  EXPECT_GE(after->in_datagrams, before->in_datagrams);
}

}  // namespace
}  // namespace testio::net
