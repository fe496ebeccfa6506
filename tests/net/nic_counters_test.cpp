#include "net/nic_counters.hpp"

#include <filesystem>
#include <fstream>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace testio::net {
namespace {

namespace fs = std::filesystem;

// A sysfs tree in a temporary directory laid out as the kernel's: class/net/NAME/statistics/*
// and, for a bond, class/net/BOND/bonding/slaves.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("testio-sysfs-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void add_nic(const std::string& name, std::uint64_t rx_bytes, std::uint64_t tx_bytes) {
    const std::string dir = "class/net/" + name + "/statistics/";
    write(dir + "rx_bytes", std::to_string(rx_bytes) + "\n");
    write(dir + "tx_bytes", std::to_string(tx_bytes) + "\n");
    write(dir + "rx_packets", "10\n");
    write(dir + "tx_packets", "20\n");
  }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST_F(FakeSysfs, ReadsStatistics) {
  add_nic("eth0", 1000, 2000);
  std::optional<NicCounters> counters = read_nic_counters("eth0", root());
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->rx_bytes, 1000u);
  EXPECT_EQ(counters->tx_bytes, 2000u);
  EXPECT_EQ(counters->rx_packets, 10u);
  EXPECT_EQ(counters->tx_packets, 20u);
  EXPECT_TRUE(nic_exists("eth0", root()));
  EXPECT_FALSE(nic_exists("eth1", root()));
  EXPECT_FALSE(read_nic_counters("eth1", root()));
}

TEST_F(FakeSysfs, BadCounterFileIsNoReading) {
  add_nic("eth0", 1, 2);
  write("class/net/eth0/statistics/tx_bytes", "12x\n");
  EXPECT_FALSE(read_nic_counters("eth0", root()));
}

TEST_F(FakeSysfs, ReadsDropsAndTheirDelta) {
  const std::string dir = "class/net/eth0/statistics/";
  write(dir + "rx_dropped", "7\n");
  write(dir + "rx_missed_errors", "100\n");
  write(dir + "rx_fifo_errors", "3\n");
  write(dir + "tx_dropped", "1\n");
  std::optional<NicDrops> before = read_nic_drops("eth0", root());
  ASSERT_TRUE(before);
  write(dir + "rx_missed_errors", "160\n");
  std::optional<NicDrops> after = read_nic_drops("eth0", root());
  ASSERT_TRUE(after);
  NicDrops during = *after - *before;
  EXPECT_EQ(during.rx_missed, 60u);
  EXPECT_EQ(during.received_lost(), 60u);
  EXPECT_EQ(after->received_lost(), 170u);
  write(dir + "tx_dropped", "many\n");
  EXPECT_FALSE(read_nic_drops("eth0", root()));
  EXPECT_FALSE(read_nic_drops("eth1", root()));
}

TEST_F(FakeSysfs, BondMeansItsMembers) {
  add_nic("bond0", 3000, 3000);
  add_nic("ens1f0", 1000, 1000);
  add_nic("ens1f1", 2000, 2000);
  write("class/net/bond0/bonding/slaves", "ens1f0 ens1f1\n");
  EXPECT_EQ(bond_members("bond0", root()), (std::vector<std::string>{"ens1f0", "ens1f1"}));
  EXPECT_TRUE(bond_members("ens1f0", root()).empty());
}

TEST_F(FakeSysfs, HostileNamesAreRefused) {
  add_nic("eth0", 1, 2);
  write("class/net/bond0/bonding/slaves", "../../etc eth0 averyveryverylongname\n");
  EXPECT_EQ(bond_members("bond0", root()), (std::vector<std::string>{"eth0"}));
  EXPECT_FALSE(is_valid_nic_name("../eth0"));
  EXPECT_FALSE(is_valid_nic_name(""));
  EXPECT_FALSE(is_valid_nic_name(".."));
  EXPECT_FALSE(is_valid_nic_name("sixteen-chars-xx"));
  EXPECT_TRUE(is_valid_nic_name("fifteen-chars-x"));
  EXPECT_FALSE(read_nic_counters("../../x", root()));
}

TEST(NicHolding, LoopbackAddressIsOnLo) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(nic_holding(reinterpret_cast<const sockaddr*>(&address)), "lo");
  address.sin_addr.s_addr = htonl(0xC6120063);  // 198.18.0.99: held by no interface here
  EXPECT_EQ(nic_holding(reinterpret_cast<const sockaddr*>(&address)), "");
}

}  // namespace
}  // namespace testio::net
