// setsockopt wrappers that read back what the kernel granted.
#pragma once

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
  bool any() const noexcept { return !congestion.empty() || mss || no_delay || fq_rate_bps > 0; }
};
void apply_tuning(int fd, const TcpTuning& tuning);
// Applies `tuning` to a throwaway socket of `family`, so a refusal is known before a test starts.
void check_tuning(const TcpTuning& tuning, int family);
bool read_no_delay(int fd) noexcept;
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
