#include "net/socket_options.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <system_error>

#include "util/units.hpp"

namespace testio::net {
namespace {

std::uint64_t set_and_read_back(int fd, int option, std::uint64_t bytes, const char* name) {
  int value = static_cast<int>(std::min<std::uint64_t>(bytes, INT_MAX / 2));
  if (setsockopt(fd, SOL_SOCKET, option, &value, sizeof value) != 0)
    throw std::system_error(errno, std::generic_category(), std::string("setsockopt ") + name);
  int granted = 0;
  socklen_t length = sizeof granted;
  if (getsockopt(fd, SOL_SOCKET, option, &granted, &length) != 0)
    throw std::system_error(errno, std::generic_category(), std::string("getsockopt ") + name);
  return static_cast<std::uint64_t>(granted);
}

}  // namespace

SocketBuffers set_socket_buffers(int fd, std::uint64_t bytes) {
  SocketBuffers buffers;
  buffers.requested = bytes;
  buffers.send_granted = set_and_read_back(fd, SO_SNDBUF, bytes, "SO_SNDBUF");
  buffers.receive_granted = set_and_read_back(fd, SO_RCVBUF, bytes, "SO_RCVBUF");
  return buffers;
}

SocketBuffers read_socket_buffers(int fd) noexcept {
  SocketBuffers buffers;
  int value = 0;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &length) == 0) buffers.send_granted = static_cast<std::uint64_t>(value);
  length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &length) == 0) buffers.receive_granted = static_cast<std::uint64_t>(value);
  return buffers;
}

std::uint32_t read_mss(int fd) noexcept {
  int mss = 0;
  socklen_t length = sizeof mss;
  if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &length) != 0 || mss < 0) return 0;
  return static_cast<std::uint32_t>(mss);
}

std::string clamp_warning(const SocketBuffers& buffers) {
  std::string warning;
  auto add = [&](const char* option, std::uint64_t granted, const char* sysctl) {
    if (!warning.empty()) warning += "; ";
    warning += std::string(option) + " " + util::format_size(buffers.requested) +
               " was clamped to " + util::format_size(granted / 2) + " (raise it with sysctl -w " +
               sysctl + "=" + std::to_string(buffers.requested) + ")";
  };
  if (buffers.send_clamped()) add("SO_SNDBUF", buffers.send_granted, "net.core.wmem_max");
  if (buffers.receive_clamped()) add("SO_RCVBUF", buffers.receive_granted, "net.core.rmem_max");
  return warning;
}

}  // namespace testio::net
