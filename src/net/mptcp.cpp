#include "net/mptcp.hpp"

#include <linux/mptcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace testio::net {
namespace {

#ifndef IPPROTO_MPTCP
constexpr int IPPROTO_MPTCP = 262;
#endif
#ifndef SOL_MPTCP
constexpr int SOL_MPTCP = 284;
#endif

// Why the kernel refused an MPTCP socket, as the one thing to change.
std::string refusal(int error) {
  std::ifstream enabled("/proc/sys/net/mptcp/enabled");
  int on = 1;
  if (enabled >> on && on == 0)
    return "--mptcp: MPTCP is off on this host (net.mptcp.enabled = 0; sysctl -w net.mptcp.enabled=1 turns it on)";
  if (error == EPROTONOSUPPORT || error == EINVAL || error == ENOPROTOOPT)
    return "--mptcp: this kernel has no MPTCP (it needs CONFIG_MPTCP, Linux 5.6 or later)";
  return std::string("--mptcp: cannot open an MPTCP socket: ") + std::strerror(error);
}

}  // namespace

int open_mptcp_socket(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);
  if (fd < 0) throw std::runtime_error(refusal(errno));
  return fd;
}

int mptcp_subflows(int fd) noexcept {
  mptcp_info info{};
  socklen_t size = sizeof info;
  // Fails with EOPNOTSUPP on plain TCP and once a connection has fallen back to it.
  if (::getsockopt(fd, SOL_MPTCP, MPTCP_INFO, &info, &size) != 0) return 0;
  if (size >= offsetof(mptcp_info, mptcpi_token) && (info.mptcpi_flags & MPTCP_INFO_FLAG_FALLBACK)) return 0;
  // mptcpi_subflows counts the subflows added to the first one.
  return 1 + info.mptcpi_subflows;
}

}  // namespace testio::net
