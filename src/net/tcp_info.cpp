#include "net/tcp_info.hpp"

#include <linux/tcp.h>  // not <netinet/tcp.h>: glibc's struct tcp_info stops before delivery_rate
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>

namespace testio::net {

TcpInfo read_tcp_info(int fd) noexcept {
  TcpInfo snapshot;
  tcp_info info{};
  socklen_t length = sizeof info;
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return snapshot;
  snapshot.valid = true;
  snapshot.rtt_us = info.tcpi_rtt;
  snapshot.rttvar_us = info.tcpi_rttvar;
  snapshot.snd_mss = info.tcpi_snd_mss;
  snapshot.snd_cwnd_bytes = info.tcpi_snd_cwnd * info.tcpi_snd_mss;
  snapshot.pmtu = info.tcpi_pmtu;
  snapshot.total_retrans = info.tcpi_total_retrans;
  // Older kernels return a shorter struct; fields past `length` were never written.
  auto has = [length](std::size_t end_offset) { return length >= end_offset; };
  if (has(offsetof(tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked))
    snapshot.bytes_acked = info.tcpi_bytes_acked;
  if (has(offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received))
    snapshot.bytes_received = info.tcpi_bytes_received;
  if (has(offsetof(tcp_info, tcpi_delivery_rate) + sizeof info.tcpi_delivery_rate))
    snapshot.delivery_rate_bps = info.tcpi_delivery_rate * 8;
  snapshot.app_limited = info.tcpi_delivery_rate_app_limited != 0;
  if (has(offsetof(tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt)) snapshot.min_rtt_us = info.tcpi_min_rtt;
  if (has(offsetof(tcp_info, tcpi_sndbuf_limited) + sizeof info.tcpi_sndbuf_limited)) {
    snapshot.chrono = true;
    snapshot.busy_us = info.tcpi_busy_time;
    snapshot.rwnd_limited_us = info.tcpi_rwnd_limited;
    snapshot.sndbuf_limited_us = info.tcpi_sndbuf_limited;
  }
  if (has(offsetof(tcp_info, tcpi_bytes_retrans) + sizeof info.tcpi_bytes_retrans)) {
    snapshot.bytes_retrans = info.tcpi_bytes_retrans;
    snapshot.bytes_sent = info.tcpi_bytes_sent;
  }
  if (has(offsetof(tcp_info, tcpi_snd_wnd) + sizeof info.tcpi_snd_wnd)) snapshot.snd_wnd = info.tcpi_snd_wnd;
  snapshot.rcv_space = info.tcpi_rcv_space;
  return snapshot;
}

const char* congestion_name(int fd, char (&buffer)[32]) noexcept {
  socklen_t length = sizeof buffer - 1;
  std::memset(buffer, 0, sizeof buffer);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buffer, &length) != 0) buffer[0] = '\0';
  return buffer;
}

}  // namespace testio::net
