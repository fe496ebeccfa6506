// The door's bookkeeping of connections in their handshake: per address, oldest first.
#include "server/handshakes.hpp"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>

namespace testio::server {
namespace {

const asio::ip::address kPeer = asio::ip::make_address("127.0.0.2");
const asio::ip::address kOther = asio::ip::make_address("::1");

TEST(Handshakes, CountsEachAddressAndForgetsThoseDone) {
  asio::io_context io;
  asio::ip::tcp::socket first(io), second(io), third(io);
  Handshakes handshakes;
  {
    Handshakes::Ticket a(handshakes, kPeer, first);
    Handshakes::Ticket b(handshakes, kPeer, second);
    Handshakes::Ticket c(handshakes, kOther, third);
    EXPECT_EQ(handshakes.total(), 3u);
    EXPECT_EQ(handshakes.held_by(kPeer), 2u);
    a.finish();
    a.finish();  // twice is once
    EXPECT_EQ(handshakes.held_by(kPeer), 1u);
    EXPECT_EQ(handshakes.total(), 2u);
  }
  EXPECT_EQ(handshakes.total(), 0u);
  EXPECT_EQ(handshakes.held_by(kPeer), 0u);
}

TEST(Handshakes, EvictsTheOldestOfThatAddressOnly) {
  asio::io_context io;
  asio::ip::tcp::socket other_socket(io), oldest_socket(io), newer_socket(io);
  Handshakes handshakes;
  Handshakes::Ticket other(handshakes, kOther, other_socket);
  Handshakes::Ticket oldest(handshakes, kPeer, oldest_socket);
  Handshakes::Ticket newer(handshakes, kPeer, newer_socket);
  EXPECT_EQ(handshakes.evict_oldest(kPeer), &oldest_socket);
  EXPECT_TRUE(oldest.evicted());
  EXPECT_FALSE(newer.evicted());
  EXPECT_FALSE(other.evicted());
  EXPECT_EQ(handshakes.held_by(kPeer), 1u);
  oldest.finish();  // an evicted ticket has left already
  EXPECT_EQ(handshakes.total(), 2u);
  EXPECT_EQ(handshakes.evict_oldest(kPeer), &newer_socket);
  EXPECT_EQ(handshakes.evict_oldest(kPeer), nullptr);
  EXPECT_EQ(handshakes.total(), 1u);
}

}  // namespace
}  // namespace testio::server
