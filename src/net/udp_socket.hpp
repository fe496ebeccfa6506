// What the UDP workload asks of a socket beyond sendmsg/recvmsg (issue 17 groundwork), each tried
// on the socket itself so a kernel without it falls back with one reason: SO_RXQ_OVFL (the count
// of datagrams this socket's full buffer dropped, carried by each datagram queued after a drop as
// the count when it was queued), UDP_GRO (the
// kernel hands over coalesced datagrams with their segment size) and UDP_SEGMENT (GSO: one send
// of many datagrams). Any thread; the functions touch only the socket they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <sys/socket.h>

namespace testio::net {

// Empty on success, else why the kernel refused (one sentence, for the fallback warning).
std::string enable_drop_counts(int fd);
std::string enable_gro(int fd);
// Makes every send on `fd` a GSO send of `segment`-byte datagrams.
std::string enable_gso(int fd, std::uint16_t segment);

// What a received message's control data said: the socket's drop count so far (SO_RXQ_OVFL) and,
// under GRO, the size of each datagram the buffer holds (0: one datagram).
struct ReceiveNotes {
  std::optional<std::uint32_t> drops;
  std::uint16_t gro_segment = 0;
};
// Room for both notes in a recvmsg's control buffer.
inline constexpr std::size_t kReceiveControlSpace = CMSG_SPACE(sizeof(std::uint32_t)) + CMSG_SPACE(sizeof(int));
ReceiveNotes read_receive_notes(const msghdr& message) noexcept;

}  // namespace testio::net
