// The host's UDP counters, IPv4 and IPv6 added up (/proc/net/snmp's "Udp:" rows, /proc/net/snmp6's
// Udp6* lines): read before and after a UDP test, their difference says how many datagrams the
// receiving host itself dropped (a full socket buffer, a bad checksum) beside the loss a flow saw.
// Reads files under `proc_root` ("/proc" normally) so tests can point at a fake tree; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace testio::net {

struct UdpCounters {
  std::uint64_t in_datagrams = 0, in_errors = 0, rcvbuf_errors = 0, sndbuf_errors = 0, no_ports = 0;
  UdpCounters operator-(const UdpCounters& earlier) const noexcept {
    return {in_datagrams - earlier.in_datagrams, in_errors - earlier.in_errors,
            rcvbuf_errors - earlier.rcvbuf_errors, sndbuf_errors - earlier.sndbuf_errors,
            no_ports - earlier.no_ports};
  }
};

// nullopt when /proc/net/snmp has no Udp rows this parser understands (snmp6 may be absent: no IPv6).
std::optional<UdpCounters> read_udp_counters(const std::string& proc_root = "/proc");

}  // namespace testio::net
