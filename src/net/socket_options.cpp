#include "net/socket_options.hpp"

#include <net/if.h>
#include <netinet/in.h>
// After <netinet/in.h>, whose definitions it would otherwise clash with: the flow label manager.
#include <linux/in6.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

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

namespace {

// Whether `fd` is an IPv6 socket (which may carry IPv4-mapped traffic too).
bool is_ipv6(int fd) noexcept {
  int domain = AF_INET;
  socklen_t length = sizeof domain;
  return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 && domain == AF_INET6;
}

std::string first_line_of(const char* path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

}  // namespace

void apply_tuning(int fd, const TcpTuning& tuning) {
  if (tuning.mss) {
    int mss = static_cast<int>(tuning.mss);
    if (setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0)
      throw std::runtime_error("the kernel refused MSS " + std::to_string(tuning.mss) + ": " + std::strerror(errno));
  }
  if (!tuning.congestion.empty() &&
      setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, tuning.congestion.data(),
                 static_cast<socklen_t>(tuning.congestion.size())) != 0) {
    if (errno == EPERM)
      throw std::runtime_error("congestion control '" + tuning.congestion + "' is not allowed here (allowed: " +
                               first_line_of("/proc/sys/net/ipv4/tcp_allowed_congestion_control") + ")");
    throw std::runtime_error("congestion control '" + tuning.congestion + "' is not available here (available: " +
                             first_line_of("/proc/sys/net/ipv4/tcp_available_congestion_control") + ")");
  }
  if (tuning.no_delay) {
    int on = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
      throw std::runtime_error(std::string("setting TCP_NODELAY failed: ") + std::strerror(errno));
  }
  if (tuning.tos) set_tos(fd, tuning.tos);
  if (tuning.fq_rate_bps > 0) {
    // The option takes bytes per second; a 64-bit value since Linux 4.20 (earlier: 32 bits).
    std::uint64_t bytes_per_second = static_cast<std::uint64_t>(tuning.fq_rate_bps / 8);
    if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bytes_per_second, sizeof bytes_per_second) != 0)
      throw std::runtime_error(std::string("setting SO_MAX_PACING_RATE failed: ") + std::strerror(errno));
  }
}

void set_tos(int fd, std::uint8_t tos) {
  const int value = tos;
  if (is_ipv6(fd)) {
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &value, sizeof value) != 0)
      throw std::runtime_error("setting the traffic class (-S " + std::to_string(tos) + ") failed: " + std::strerror(errno));
    (void)setsockopt(fd, IPPROTO_IP, IP_TOS, &value, sizeof value);  // for IPv4-mapped peers; an IPv6-only socket refuses
    return;
  }
  if (setsockopt(fd, IPPROTO_IP, IP_TOS, &value, sizeof value) != 0)
    throw std::runtime_error("setting the TOS byte (-S " + std::to_string(tos) + ") failed: " + std::strerror(errno));
}

void set_dont_fragment(int fd) {
  int value = IP_PMTUDISC_DO;
  const bool six = is_ipv6(fd);
  if (six) value = IPV6_PMTUDISC_DO;
  if (setsockopt(fd, six ? IPPROTO_IPV6 : IPPROTO_IP, six ? IPV6_MTU_DISCOVER : IP_MTU_DISCOVER, &value, sizeof value) != 0)
    throw std::runtime_error(std::string("setting DF (--dont-fragment) failed: ") + std::strerror(errno));
  if (six) (void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &value, sizeof value);  // IPv4-mapped peers
}

void check_tuning(const TcpTuning& tuning, int family) {
  if (!tuning.any()) return;
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;  // the real socket will say what is wrong
  try {
    apply_tuning(fd, tuning);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void set_user_timeout(int fd, std::uint32_t milliseconds) {
  const unsigned int value = milliseconds;
  if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &value, sizeof value) != 0)
    throw std::runtime_error(std::string("setting TCP_USER_TIMEOUT (--snd-timeout) failed: ") + std::strerror(errno));
}

std::uint32_t lease_flow_label(int fd, const std::array<unsigned char, 16>& destination, std::uint32_t label) {
  in6_flowlabel_req request{};
  std::memcpy(&request.flr_dst, destination.data(), destination.size());
  request.flr_label = htonl(label & IPV6_FLOWINFO_FLOWLABEL);
  request.flr_action = IPV6_FL_A_GET;
  request.flr_flags = IPV6_FL_F_CREATE;
  request.flr_share = IPV6_FL_S_ANY;
  const int on = 1;
  if (setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &request, sizeof request) != 0 ||
      setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO_SEND, &on, sizeof on) != 0)
    throw std::runtime_error(std::string("setting IPv6 flow label ") + std::to_string(label) +
                             " (-L) failed: " + std::strerror(errno));
  return request.flr_label;
}

void set_keepalive(int fd, std::uint32_t idle_s, std::uint32_t interval_s, std::uint32_t count) {
  const int on = 1;
  bool set = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0;
  const std::pair<int, std::uint32_t> times[] = {
      {TCP_KEEPIDLE, idle_s}, {TCP_KEEPINTVL, interval_s}, {TCP_KEEPCNT, count}};
  for (const auto& [option, value] : times) {
    const int wanted = static_cast<int>(value);
    if (set && value) set = setsockopt(fd, IPPROTO_TCP, option, &wanted, sizeof wanted) == 0;
  }
  if (!set) throw std::runtime_error(std::string("setting TCP keepalive (--cntl-ka) failed: ") + std::strerror(errno));
}

void bind_to_device(int fd, const std::string& device) {
  if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, device.c_str(), static_cast<socklen_t>(device.size())) == 0) return;
  if (errno == ENODEV) throw std::runtime_error("-B: there is no network interface '" + device + "'");
  if (errno == EPERM) throw std::runtime_error("-B %" + device + ": binding to an interface needs CAP_NET_RAW");
  throw std::runtime_error("-B %" + device + ": " + std::strerror(errno));
}

std::string read_bound_device(int fd) {
  char name[IF_NAMESIZE + 1] = {};
  socklen_t length = sizeof name;
  if (getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, &length) != 0) return {};
  return std::string(name, strnlen(name, sizeof name));
}

bool read_no_delay(int fd) noexcept {
  int value = 0;
  socklen_t length = sizeof value;
  return getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &length) == 0 && value != 0;
}

double read_pacing_rate_bps(int fd) noexcept {
  std::uint64_t value = 0;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &value, &length) != 0) return 0;
  if (length == sizeof(std::uint32_t)) value &= 0xffffffffu;
  // ~0 (64 or 32 bits) means no cap.
  if (value == ~0ull || (length == sizeof(std::uint32_t) && value == 0xffffffffu)) return 0;
  return static_cast<double>(value) * 8;
}

int read_incoming_cpu(int fd) noexcept {
  int cpu = -1;
  socklen_t length = sizeof cpu;
  if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &length) != 0 || length != sizeof cpu) return -1;
  return cpu;
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
