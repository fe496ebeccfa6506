// TCP_INFO snapshot as a plain struct, so stats/ and report/ need no kernel headers.
#pragma once

#include <cstdint>

namespace testio::net {

struct TcpInfo {
  bool valid = false;
  std::uint32_t rtt_us = 0;
  std::uint32_t rttvar_us = 0;
  std::uint32_t snd_cwnd_bytes = 0;    // cwnd in segments x MSS, as iperf3 reports it
  std::uint32_t snd_mss = 0;
  std::uint32_t pmtu = 0;
  std::uint32_t total_retrans = 0;     // cumulative over the connection's life
  std::uint64_t delivery_rate_bps = 0; // bits/s; 0 where the kernel does not report it (< 4.9)
  std::uint64_t bytes_acked = 0;
  std::uint64_t bytes_received = 0;
  // What held the sender back, the kernel's own account (Linux 4.10 on; `chrono` says it was there).
  // busy covers all three: time with data queued to send; rwnd_limited and sndbuf_limited are the
  // parts stalled by the peer's window and by the send buffer; the rest of busy waited on cwnd.
  bool chrono = false;
  std::uint64_t busy_us = 0;
  std::uint64_t rwnd_limited_us = 0;
  std::uint64_t sndbuf_limited_us = 0;
  bool app_limited = false;            // the last delivery-rate sample was limited by the application
  std::uint32_t min_rtt_us = 0;        // 0 where the kernel does not report it (< 4.6)
  std::uint32_t snd_wnd = 0;           // the peer's last advertised window, bytes (5.4 on; 0 unknown)
  std::uint32_t rcv_space = 0;         // what the receiver's autotuning thinks the path needs, bytes
  std::uint64_t bytes_retrans = 0;     // 4.19 on
  std::uint64_t bytes_sent = 0;        // 4.19 on, retransmissions included
};

// Reads TCP_INFO for `fd`; an invalid snapshot when the call fails (e.g. the socket is closed).
TcpInfo read_tcp_info(int fd) noexcept;

// The congestion control algorithm in use on `fd` ("cubic"), or empty.
const char* congestion_name(int fd, char (&buffer)[32]) noexcept;

}  // namespace testio::net
