// Flow paths: the bond hash against the kernel's documented formula, the sysfs layouts of bonds
// and stacked devices (a fake tree), and real route lookups on this host's loopback.
#include "net/flow_path.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <unistd.h>

#include "net/port_spread.hpp"
#include "net/route_lookup.hpp"

namespace testio::net {
namespace {

namespace fs = std::filesystem;

sockaddr_in v4(const char* address, std::uint16_t port) {
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &socket_address.sin_addr);
  return socket_address;
}

const sockaddr* as_sockaddr(const sockaddr_in& address) { return reinterpret_cast<const sockaddr*>(&address); }

TEST(Layer34, MatchesTheKernelsFormula) {
  // Worked by hand from bond_xmit_hash: ports word ^ daddr ^ saddr, folded by 16 and 8, >> 1.
  const sockaddr_in server = v4("198.18.0.2", 5201);
  const int two_members[] = {1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0};
  for (std::uint16_t i = 0; i < 16; ++i) {
    const sockaddr_in client = v4("198.18.0.1", static_cast<std::uint16_t>(40000 + i));
    EXPECT_EQ(layer34_member(as_sockaddr(client), as_sockaddr(server), 2), static_cast<std::uint32_t>(two_members[i]))
        << "source port " << 40000 + i;
  }
  const sockaddr_in far = v4("10.0.0.2", 5201);
  const int three_members[] = {1, 0, 1, 0, 0, 2, 0, 2, 0, 2, 0, 2};
  for (std::uint16_t i = 0; i < 12; ++i) {
    const sockaddr_in near = v4("10.0.0.1", static_cast<std::uint16_t>(50000 + i));
    EXPECT_EQ(layer34_member(as_sockaddr(near), as_sockaddr(far), 3), static_cast<std::uint32_t>(three_members[i]));
  }
  EXPECT_EQ(layer34_member(as_sockaddr(server), as_sockaddr(far), 0), 0u);
}

// class/net/NAME/{statistics,operstate,bonding/*,lower_*} as the kernel lays them out.
class FakeDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("testio-paths-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::path path = root_ / "class/net" / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void add_device(const std::string& name, const std::string& state = "up") {
    write(name + "/statistics/tx_bytes", "0\n");
    write(name + "/operstate", state + "\n");
  }
  void add_bond(const std::string& name, const std::string& mode, const std::string& policy, const std::string& members) {
    add_device(name);
    write(name + "/bonding/mode", mode + "\n");
    write(name + "/bonding/xmit_hash_policy", policy + "\n");
    write(name + "/bonding/slaves", members + "\n");
  }
  void stack(const std::string& upper, const std::string& lower) {
    add_device(upper);
    fs::create_directory_symlink("../" + lower, root_ / "class/net" / upper / ("lower_" + lower));
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

TEST_F(FakeDevices, CarryingDevicesFollowVlansToBondMembers) {
  add_device("eth0");
  add_device("eth1");
  add_bond("bond0", "balance-xor 2", "layer3+4 1", "eth0 eth1");
  stack("bond0.10", "bond0");
  add_device("plain");
  EXPECT_EQ(carrying_devices("bond0.10", root()), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(carrying_devices("bond0", root()), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(carrying_devices("plain", root()), (std::vector<std::string>{"plain"}));
}

TEST_F(FakeDevices, AskedNicsAreExpandedAndTheRestFallBackToTheRoute) {
  add_device("eth0");
  add_device("eth1");
  add_bond("bond0", "802.3ad 4", "layer3+4 1", "eth0 eth1");
  ChosenNics asked = choose_nics({"bond0", "eth1", "nosuch"}, nullptr, nullptr, root());
  EXPECT_EQ(asked.names, (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(asked.reason, "as asked (bond0, eth1, nosuch)");
  // Loopback routes by lo, which this fake tree does not have: no NIC, and the reason says why.
  const sockaddr_in here = v4("127.0.0.1", 40000), there = v4("127.0.0.1", 5201);
  ChosenNics fallback = choose_nics({"nosuch"}, as_sockaddr(here), as_sockaddr(there), root());
  EXPECT_TRUE(fallback.names.empty());
  EXPECT_NE(fallback.reason.find("the route to 127.0.0.1 leaves by lo"), std::string::npos) << fallback.reason;
  EXPECT_NE(fallback.reason.find("none of nosuch is here"), std::string::npos) << fallback.reason;
}

// Loopback as the kernel routes it ("lo"), with the fake tree making lo a bond: the member the
// layer3+4 hash picks among those up.
TEST_F(FakeDevices, ABondsMemberIsTheOneItsHashPicks) {
  add_device("m0");
  add_device("m1", "down");
  add_device("m2");
  add_bond("lo", "balance-xor 2", "layer3+4 1", "m0 m1 m2");
  const sockaddr_in server = v4("127.0.0.1", 5201);
  for (std::uint16_t port = 40000; port < 40008; ++port) {
    const sockaddr_in client = v4("127.0.0.1", port);
    FlowPath path = flow_path(as_sockaddr(client), as_sockaddr(server), root());
    const char* expected = layer34_member(as_sockaddr(client), as_sockaddr(server), 2) == 0 ? "m0" : "m2";
    EXPECT_EQ(path.device, expected);
    EXPECT_EQ(path.how, "route, lo layer3+4 hash");
  }
  write("lo/bonding/mode", "active-backup 1\n");
  write("lo/bonding/active_slave", "m2\n");
  EXPECT_EQ(flow_path(as_sockaddr(v4("127.0.0.1", 40000)), as_sockaddr(server), root()).device, "m2");
  write("lo/bonding/mode", "balance-rr 0\n");
  FlowPath round_robin = flow_path(as_sockaddr(v4("127.0.0.1", 40000)), as_sockaddr(server), root());
  EXPECT_EQ(round_robin.device, kUnknownDevice);
  EXPECT_EQ(round_robin.how, "route, lo balance-rr layer3+4");
}

// --spread even over the fake bond: each port handed out hashes to the member whose turn it is.
TEST_F(FakeDevices, SpreadPortsTakeTheMembersInTurn) {
  add_device("m0");
  add_device("m1");
  add_bond("lo", "802.3ad 4", "layer3+4 1", "m0 m1");
  const sockaddr_in client = v4("127.0.0.1", 0), server = v4("127.0.0.1", 5201);
  PortSpreader spreader(as_sockaddr(client), as_sockaddr(server), root());
  ASSERT_EQ(spreader.devices(), (std::vector<std::string>{"m0", "m1"})) << spreader.why_not();
  std::vector<std::uint16_t> handed;
  for (std::uint32_t turn = 0; turn < 8; ++turn) {
    const std::uint16_t port = spreader.port_for(turn);
    ASSERT_NE(port, 0);
    EXPECT_EQ(std::count(handed.begin(), handed.end(), port), 0) << "port " << port << " twice";
    handed.push_back(port);
    EXPECT_EQ(layer34_member(as_sockaddr(v4("127.0.0.1", port)), as_sockaddr(server), 2), turn % 2);
  }
  write("lo/bonding/xmit_hash_policy", "layer2 0\n");
  PortSpreader unpredictable(as_sockaddr(client), as_sockaddr(server), root());
  EXPECT_TRUE(unpredictable.devices().empty());
  EXPECT_NE(unpredictable.why_not().find("not predictable"), std::string::npos) << unpredictable.why_not();
  EXPECT_EQ(unpredictable.port_for(0), 0);
}

TEST(PortSpreader, OneInterfaceIsNothingToSpread) {
  const sockaddr_in client = v4("127.0.0.1", 0), server = v4("127.0.0.1", 5201);
  PortSpreader spreader(as_sockaddr(client), as_sockaddr(server));
  EXPECT_TRUE(spreader.devices().empty());
  EXPECT_EQ(spreader.why_not(), "the route to the server leaves by lo alone");
}

TEST(FlowPath, LoopbackLeavesByLo) {
  const sockaddr_in client = v4("127.0.0.1", 40000), server = v4("127.0.0.1", 5201);
  FlowPath path = flow_path(as_sockaddr(client), as_sockaddr(server));
  EXPECT_EQ(path.device, "lo");
  EXPECT_EQ(path.how, "route");
  ChosenNics chosen = choose_nics({}, as_sockaddr(client), as_sockaddr(server));
  EXPECT_EQ(chosen.names, (std::vector<std::string>{"lo"}));
  EXPECT_EQ(chosen.reason, "the route to 127.0.0.1 leaves by lo");
}

TEST(RouteReply, ParsesNexthopsAndRefusesWhatDoesNotParse) {
  EXPECT_FALSE(parse_route_reply(nullptr, 0).error.empty());
  // A reply with one RTA_OIF.
  struct {
    nlmsghdr header;
    rtmsg route;
    rtattr oif;
    int ifindex;
  } reply{};
  reply.header.nlmsg_len = sizeof(reply);
  reply.header.nlmsg_type = RTM_NEWROUTE;
  reply.route.rtm_family = AF_INET;
  reply.oif.rta_type = RTA_OIF;
  reply.oif.rta_len = RTA_LENGTH(sizeof(int));
  reply.ifindex = 7;
  RouteReply parsed = parse_route_reply(reinterpret_cast<const unsigned char*>(&reply), sizeof(reply));
  ASSERT_EQ(parsed.nexthops.size(), 1u);
  EXPECT_EQ(parsed.nexthops[0].ifindex, 7);
  // Cut short, it names no interface rather than reading past its end.
  reply.header.nlmsg_len = sizeof(nlmsghdr) + sizeof(rtmsg) + 2;
  EXPECT_FALSE(parse_route_reply(reinterpret_cast<const unsigned char*>(&reply), sizeof(reply)).error.empty());
  // The kernel's refusal.
  struct {
    nlmsghdr header;
    nlmsgerr error;
  } refusal{};
  refusal.header.nlmsg_len = sizeof(refusal);
  refusal.header.nlmsg_type = NLMSG_ERROR;
  refusal.error.error = -ENETUNREACH;
  EXPECT_EQ(parse_route_reply(reinterpret_cast<const unsigned char*>(&refusal), sizeof(refusal)).error,
            std::string("no route: ") + std::strerror(ENETUNREACH));
}

}  // namespace
}  // namespace testio::net
