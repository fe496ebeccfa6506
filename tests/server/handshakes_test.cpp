// The door's bookkeeping of connections in their handshake: per address, oldest first.
#include "server/handshakes.hpp"

#include <poll.h>

#include <gtest/gtest.h>

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>

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
  EXPECT_EQ(handshakes.evict_oldest_idle(kPeer), &oldest_socket);
  EXPECT_TRUE(oldest.evicted());
  EXPECT_FALSE(newer.evicted());
  EXPECT_FALSE(other.evicted());
  EXPECT_EQ(handshakes.held_by(kPeer), 1u);
  oldest.finish();  // an evicted ticket has left already
  EXPECT_EQ(handshakes.total(), 2u);
  EXPECT_EQ(handshakes.evict_oldest_idle(kPeer), &newer_socket);
  EXPECT_EQ(handshakes.evict_oldest_idle(kPeer), nullptr);
  EXPECT_EQ(handshakes.total(), 1u);
}

// A connection whose preamble is in but not yet read (a busy server) is no idle one: the oldest
// that waits on its peer goes instead, and none goes when every one has bytes waiting.
TEST(Handshakes, NeverEvictsAHandshakeWhoseBytesAreWaiting) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  asio::ip::tcp::socket sent_client(io), idle_client(io), sent(io), idle(io);
  sent_client.connect(acceptor.local_endpoint());
  acceptor.accept(sent);
  idle_client.connect(acceptor.local_endpoint());
  acceptor.accept(idle);
  asio::write(sent_client, asio::buffer("TSTO", 4));
  pollfd readable{sent.native_handle(), POLLIN, 0};
  ASSERT_EQ(::poll(&readable, 1, 5000), 1);
  Handshakes handshakes;
  Handshakes::Ticket oldest(handshakes, kPeer, sent);
  Handshakes::Ticket newer(handshakes, kPeer, idle);
  EXPECT_EQ(handshakes.evict_oldest_idle(kPeer), &idle);
  EXPECT_TRUE(newer.evicted());
  EXPECT_FALSE(oldest.evicted());
  EXPECT_EQ(handshakes.evict_oldest_idle(kPeer), nullptr);
  EXPECT_EQ(handshakes.held_by(kPeer), 1u);
}

}  // namespace
}  // namespace testio::server
