#include "net/udp_socket.hpp"

#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/udp.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace testio::net {
namespace {

std::string refusal(const char* what) { return std::string(what) + " is not available here: " + std::strerror(errno); }

}  // namespace

std::string enable_drop_counts(int fd) {
  const int on = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on)) == 0 ? "" : refusal("SO_RXQ_OVFL");
}

std::string enable_gro(int fd) {
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof(on)) == 0 ? "" : refusal("UDP_GRO");
}

std::string enable_gso(int fd, std::uint16_t segment) {
  const int size = segment;
  return ::setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &size, sizeof(size)) == 0 ? "" : refusal("UDP_SEGMENT");
}

ReceiveNotes read_receive_notes(const msghdr& message) noexcept {
  ReceiveNotes notes;
  for (const cmsghdr* note = CMSG_FIRSTHDR(&message); note; note = CMSG_NXTHDR(const_cast<msghdr*>(&message),
                                                                               const_cast<cmsghdr*>(note))) {
    if (note->cmsg_level == SOL_SOCKET && note->cmsg_type == SO_RXQ_OVFL &&
        note->cmsg_len >= CMSG_LEN(sizeof(std::uint32_t))) {
      std::uint32_t drops = 0;
      std::memcpy(&drops, CMSG_DATA(note), sizeof(drops));
      notes.drops = drops;
    } else if (note->cmsg_level == IPPROTO_UDP && note->cmsg_type == UDP_GRO &&
               note->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int segment = 0;
      std::memcpy(&segment, CMSG_DATA(note), sizeof(segment));
      if (segment > 0 && segment <= 65535) notes.gro_segment = static_cast<std::uint16_t>(segment);
    }
  }
  return notes;
}

}  // namespace testio::net
