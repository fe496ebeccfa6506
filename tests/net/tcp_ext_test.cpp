#include "net/tcp_ext.hpp"

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>
#include <unistd.h>

namespace testio::net {
namespace {

namespace fs = std::filesystem;

// /proc/net/netstat as a 6.1 kernel writes it, cut short: IpExt first here (the kernel puts it
// second) so taking the first pair would be caught, and MPTcpExt, whose prefix ends in "TcpExt:".
constexpr const char* kNetstat =
    "IpExt: InNoRoutes InTruncatedPkts InMcastPkts InOctets OutOctets\n"
    "IpExt: 0 0 0 11000337344238 10998137039125\n"
    "TcpExt: SyncookiesSent SyncookiesRecv PruneCalled RcvPruned TW DelayedACKs ListenOverflows "
    "ListenDrops TCPLostRetransmit TCPTimeouts TCPBacklogDrop TCPRcvQDrop\n"
    "TcpExt: 0 0 4182 1482 291177 415616 7 9 33034 6852 3 18446744073709551615\n"
    "MPTcpExt: MPCapableSYNRX MPCapableSYNTX MPTCPRetrans\n"
    "MPTcpExt: 5 6 7\n";

TEST(TcpExt, TakesTheTcpExtPairInFileOrder) {
  const std::vector<NamedCounter> counters = parse_tcp_ext(kNetstat);
  ASSERT_EQ(counters.size(), 12u);
  EXPECT_EQ(counters.front().name, "SyncookiesSent");
  EXPECT_EQ(counters[2].name, "PruneCalled");
  EXPECT_EQ(counters[2].value, 4182u);
  EXPECT_EQ(counters.back().name, "TCPRcvQDrop");
  EXPECT_EQ(counters.back().value, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(find_counter(counters, "ListenOverflows"), 7u);
  EXPECT_EQ(find_counter(counters, "TCPTimeouts"), 6852u);
  EXPECT_EQ(find_counter(counters, "SyncookiesRecv"), 0u);
  // Other sections' names are not TcpExt's, and a counter this kernel lacks is nullopt, not 0.
  EXPECT_EQ(find_counter(counters, "InOctets"), std::nullopt);
  EXPECT_EQ(find_counter(counters, "MPTCPRetrans"), std::nullopt);
  EXPECT_EQ(find_counter(counters, "TCPMigrateReqSuccess"), std::nullopt);
  EXPECT_EQ(find_counter({}, "TCPTimeouts"), std::nullopt);
}

TEST(TcpExt, KernelOrderWithTcpExtFirst) {
  const std::vector<NamedCounter> counters =
      parse_tcp_ext("TcpExt: TCPTimeouts TCPBacklogDrop\nTcpExt: 12 34\nIpExt: InNoRoutes\nIpExt: 56\n");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].name, "TCPTimeouts");
  EXPECT_EQ(counters[0].value, 12u);
  EXPECT_EQ(counters[1].name, "TCPBacklogDrop");
  EXPECT_EQ(counters[1].value, 34u);
  // Without a final newline the values line still counts.
  EXPECT_EQ(parse_tcp_ext("TcpExt: A B\nTcpExt: 1 2").size(), 2u);
}

TEST(TcpExt, MalformedTextGivesWhatCouldBeRead) {
  EXPECT_TRUE(parse_tcp_ext("").empty());
  EXPECT_TRUE(parse_tcp_ext("IpExt: InOctets\nIpExt: 1\n").empty());
  EXPECT_TRUE(parse_tcp_ext("TcpExt: A B\n").empty());                       // names, no values
  EXPECT_TRUE(parse_tcp_ext("TcpExt: A B\nIpExt: 1 2\nTcpExt: 1 2\n").empty());  // values not next
  EXPECT_TRUE(parse_tcp_ext("TcpExt:\nTcpExt:\n").empty());
  EXPECT_TRUE(parse_tcp_ext("MPTcpExt: A\nMPTcpExt: 1\n").empty());
  // Counts that differ: the pairs both lines have.
  std::vector<NamedCounter> fewer_values = parse_tcp_ext("TcpExt: A B C\nTcpExt: 1 2\n");
  ASSERT_EQ(fewer_values.size(), 2u);
  EXPECT_EQ(fewer_values[1].name, "B");
  EXPECT_EQ(parse_tcp_ext("TcpExt: A\nTcpExt: 1 2 3\n").size(), 1u);
  // A value not a number ends the reading there.
  std::vector<NamedCounter> bad_value = parse_tcp_ext("TcpExt: A B C\nTcpExt: 1 x2 3\n");
  ASSERT_EQ(bad_value.size(), 1u);
  EXPECT_EQ(bad_value[0].value, 1u);
  EXPECT_EQ(parse_tcp_ext("TcpExt: A B\nTcpExt: -1 2\n").size(), 0u);
  EXPECT_EQ(parse_tcp_ext("TcpExt: A B\nTcpExt: 1 99999999999999999999999\n").size(), 1u);
}

// ROOT/proc/net/netstat in a temporary directory.
class FakeProcNet : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("testio-netstat-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "proc" / "net");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

TEST_F(FakeProcNet, ReadsTheFileUnderTheRoot) {
  std::ofstream(root_ / "proc" / "net" / "netstat") << kNetstat;
  const std::vector<NamedCounter> counters = read_tcp_ext(root_.string());
  ASSERT_EQ(counters.size(), 12u);
  EXPECT_EQ(find_counter(counters, "TCPLostRetransmit"), 33034u);
}

TEST_F(FakeProcNet, NoFileIsNoCounters) {
  EXPECT_TRUE(read_tcp_ext(root_.string()).empty());
  EXPECT_TRUE(read_tcp_ext("/nonexistent-testio-root").empty());
}

TEST(TcpExt, ReadsThisHost) {
  const std::vector<NamedCounter> counters = read_tcp_ext();
  EXPECT_FALSE(counters.empty());
  // In the kernel's TcpExt since 2.6: a host without it is not reading the real file.
  EXPECT_TRUE(find_counter(counters, "ListenOverflows").has_value());
}

}  // namespace
}  // namespace testio::net
