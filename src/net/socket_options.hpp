// setsockopt wrappers that read back what the kernel granted.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace testio::net {

struct SocketBuffers {
  std::uint64_t requested = 0;
  std::uint64_t send_granted = 0;     // getsockopt(SO_SNDBUF) after the set
  std::uint64_t receive_granted = 0;  // getsockopt(SO_RCVBUF) after the set
  // Linux doubles the request for its bookkeeping overhead (socket(7)) and caps it at
  // net.core.wmem_max / rmem_max; a grant below twice the request means the cap was hit.
  bool send_clamped() const noexcept { return send_granted < 2 * requested; }
  bool receive_clamped() const noexcept { return receive_granted < 2 * requested; }
};

// Sets SO_SNDBUF and SO_RCVBUF to `bytes` on `fd` and reads both back. Throws std::system_error.
SocketBuffers set_socket_buffers(int fd, std::uint64_t bytes);

// What the kernel currently grants, without changing it.
SocketBuffers read_socket_buffers(int fd) noexcept;
// TCP_MAXSEG: the MSS in use on a connected socket; 0 if unknown.
std::uint32_t read_mss(int fd) noexcept;

// -C, -N and --fq-rate for a data connection (-M goes with them before connect). Throws
// std::runtime_error with one sentence when the kernel refuses one.
struct TcpTuning {
  std::string congestion;     // empty: the system default
  std::uint32_t mss = 0;      // 0: leave it
  bool no_delay = false;
  double fq_rate_bps = 0;     // 0: no cap
  std::uint8_t tos = 0;       // -S/--dscp: IP_TOS (IPV6_TCLASS); 0: leave the kernel's
  bool any() const noexcept { return !congestion.empty() || mss || no_delay || fq_rate_bps > 0 || tos; }
};
void apply_tuning(int fd, const TcpTuning& tuning);
// Applies `tuning` to a throwaway socket of `family`, so a refusal is known before a test starts.
void check_tuning(const TcpTuning& tuning, int family);
bool read_no_delay(int fd) noexcept;
// The TOS byte (IPv4) or traffic class (IPv6) of every packet `fd` sends; an IPv6 socket gets both,
// as it may carry IPv4-mapped traffic. Throws std::runtime_error with one sentence when refused.
void set_tos(int fd, std::uint8_t tos);
// --dont-fragment: DF on every packet (IP_PMTUDISC_DO, and IPV6_PMTUDISC_DO on an IPv6 socket),
// so a datagram larger than the path's MTU fails with EMSGSIZE. Throws std::runtime_error.
void set_dont_fragment(int fd);
// --snd-timeout: TCP_USER_TIMEOUT, how long sent data may stay unacknowledged before the kernel
// drops the connection. Throws std::runtime_error with one sentence when refused.
void set_user_timeout(int fd, std::uint32_t milliseconds);
// -L: leases IPv6 flow label `label` (1 to 0xfffff) toward `destination` for `fd` and has it sent
// (IPV6_FLOWLABEL_MGR, IPV6_FLOWINFO_SEND); returns the sin6_flowinfo (network order) that the
// connect target must carry. Throws std::runtime_error with one sentence when refused.
std::uint32_t lease_flow_label(int fd, const std::array<unsigned char, 16>& destination, std::uint32_t label);
// --cntl-ka: TCP keepalive after `idle_s` (TCP_KEEPIDLE), a probe every `interval_s`
// (TCP_KEEPINTVL), `count` probes (TCP_KEEPCNT); each 0 for the kernel's (net.ipv4.tcp_keepalive_*).
// Throws std::runtime_error with one sentence when refused.
void set_keepalive(int fd, std::uint32_t idle_s, std::uint32_t interval_s, std::uint32_t count);
// -B ADDRESS%DEV: SO_BINDTODEVICE. Throws std::runtime_error with one sentence when refused.
void bind_to_device(int fd, const std::string& device);
// The device a socket is bound to; empty when none.
std::string read_bound_device(int fd);
// SO_MAX_PACING_RATE in bits/s; 0 when unlimited or unknown.
double read_pacing_rate_bps(int fd) noexcept;
// SO_INCOMING_CPU: the CPU that last processed a packet for this socket; -1 when unknown.
int read_incoming_cpu(int fd) noexcept;

// One sentence naming the sysctl to raise, or empty when nothing was clamped.
std::string clamp_warning(const SocketBuffers& buffers);

}  // namespace testio::net
