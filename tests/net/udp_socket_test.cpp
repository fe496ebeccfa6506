// UDP socket facilities on this host's loopback: a full buffer's drops reported with the next
// receive, and a GSO send read back whole under GRO (or as its datagrams, where GRO does not
// coalesce), every byte accounted for.
#include "net/udp_socket.hpp"

#include <array>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

namespace testio::net {
namespace {

// A bound receiver and a sender connected to it, on 127.0.0.1.
struct Pair {
  Pair() {
    receiver = ::socket(AF_INET, SOCK_DGRAM, 0);
    sender = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(receiver, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t size = sizeof(address);
    ::getsockname(receiver, reinterpret_cast<sockaddr*>(&address), &size);
    ::connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  ~Pair() {
    ::close(receiver);
    ::close(sender);
  }
  // One recvmsg without waiting: its size (-1 when nothing is there) and notes.
  ssize_t receive(std::vector<char>& buffer, ReceiveNotes& notes) const {
    iovec part{buffer.data(), buffer.size()};
    alignas(cmsghdr) std::array<char, kReceiveControlSpace> control{};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    const ssize_t got = ::recvmsg(receiver, &message, MSG_DONTWAIT);
    if (got >= 0) notes = read_receive_notes(message);
    return got;
  }
  int receiver = -1, sender = -1;
};

TEST(UdpSocket, AFullBufferReportsItsDropsWithTheNextReceive) {
  Pair pair;
  ASSERT_EQ(enable_drop_counts(pair.receiver), "");
  const int small = 4096;
  ::setsockopt(pair.receiver, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  const std::vector<char> datagram(1400, 'x');
  for (int i = 0; i < 200; ++i) ::send(pair.sender, datagram.data(), datagram.size(), 0);
  std::vector<char> buffer(2048);
  ReceiveNotes notes;
  int queued = 0;
  while (pair.receive(buffer, notes) > 0) ++queued;  // those queued before the first drop say nothing
  EXPECT_GT(queued, 0);
  EXPECT_LT(queued, 100);  // a 4 KiB buffer holds a handful of the 200
  // A datagram queued after the drops carries the socket's count of them.
  ::send(pair.sender, datagram.data(), datagram.size(), 0);
  ASSERT_GT(pair.receive(buffer, notes), 0);
  ASSERT_TRUE(notes.drops);
  EXPECT_GE(*notes.drops, 100u);
  EXPECT_LE(*notes.drops, static_cast<std::uint32_t>(200 - queued));
  EXPECT_EQ(notes.gro_segment, 0);
}

TEST(UdpSocket, AGsoSendArrivesWholeUnderGroOrAsItsDatagrams) {
  Pair pair;
  ASSERT_EQ(enable_gro(pair.receiver), "");
  ASSERT_EQ(enable_gso(pair.sender, 1000), "");
  const std::vector<char> burst(3500, 'y');  // three datagrams of 1000 and one of 500
  ASSERT_EQ(::send(pair.sender, burst.data(), burst.size(), 0), 3500);
  std::vector<char> buffer(65536);
  std::size_t bytes = 0;
  for (int reads = 0; reads < 8 && bytes < burst.size(); ++reads) {
    ReceiveNotes notes;
    const ssize_t got = pair.receive(buffer, notes);
    if (got < 0) break;
    bytes += static_cast<std::size_t>(got);
    if (got > 1000) {
      EXPECT_EQ(notes.gro_segment, 1000);  // coalesced: each datagram's size said
    }
  }
  EXPECT_EQ(bytes, burst.size());
}

TEST(UdpSocket, ReceiveNotesIgnoreWhatTheyDoNotKnow) {
  msghdr empty{};
  const ReceiveNotes notes = read_receive_notes(empty);
  EXPECT_FALSE(notes.drops);
  EXPECT_EQ(notes.gro_segment, 0);
}

}  // namespace
}  // namespace testio::net
