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
};

// Reads TCP_INFO for `fd`; an invalid snapshot when the call fails (e.g. the socket is closed).
TcpInfo read_tcp_info(int fd) noexcept;

// The congestion control algorithm in use on `fd` ("cubic"), or empty.
const char* congestion_name(int fd, char (&buffer)[32]) noexcept;

}  // namespace testio::net
