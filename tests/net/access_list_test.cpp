// --allow: which peers a server talks to, by network, for IPv4, IPv6 and IPv4-mapped peers.
#include "net/access_list.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include <asio/ip/address.hpp>

namespace testio::net {
namespace {

bool allows(const AccessList& list, const char* address) { return list.allows(asio::ip::make_address(address)); }

TEST(AccessList, AnEmptyListAllowsEveryone) {
  const AccessList list = AccessList::parse("");
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(allows(list, "203.0.113.9"));
  EXPECT_TRUE(allows(list, "2001:db8::1"));
}

TEST(AccessList, MatchesNetworksToTheirPrefixBits) {
  const AccessList list = AccessList::parse("198.18.0.0/15,fd00::/8,127.0.0.1");
  EXPECT_TRUE(allows(list, "198.19.255.255"));
  EXPECT_FALSE(allows(list, "198.20.0.0"));
  EXPECT_FALSE(allows(list, "198.17.255.255"));
  EXPECT_TRUE(allows(list, "fdff::1"));
  EXPECT_FALSE(allows(list, "fe00::1"));
  EXPECT_TRUE(allows(list, "127.0.0.1"));  // a host without a prefix is /32
  EXPECT_FALSE(allows(list, "127.0.0.2"));
}

TEST(AccessList, ChecksIpv4MappedPeersAsIpv4AndNeverMixesFamilies) {
  const AccessList list = AccessList::parse("127.0.0.0/8");
  EXPECT_TRUE(allows(list, "::ffff:127.0.0.5"));  // a dual-stack listener's view of 127.0.0.5
  EXPECT_FALSE(allows(list, "::1"));
  // An IPv6 network whose first bytes equal an IPv4 address's does not take that address in.
  const AccessList v6 = AccessList::parse("7f00::/8");
  EXPECT_FALSE(allows(v6, "127.0.0.1"));
  EXPECT_TRUE(allows(AccessList::parse("0.0.0.0/0"), "192.0.2.1"));
  EXPECT_FALSE(allows(AccessList::parse("0.0.0.0/0"), "2001:db8::1"));
}

TEST(AccessList, RefusesBadEntriesInOneSentence) {
  EXPECT_THROW(AccessList::parse("127.0.0.1/40"), std::invalid_argument);
  EXPECT_THROW(AccessList::parse("::1/129"), std::invalid_argument);
  EXPECT_THROW(AccessList::parse("10.0.0.0/"), std::invalid_argument);
  EXPECT_THROW(AccessList::parse("10.0.0.0,,::1"), std::invalid_argument);
  EXPECT_THROW(AccessList::parse("example.org"), std::invalid_argument);
}

}  // namespace
}  // namespace testio::net
