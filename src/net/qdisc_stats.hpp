// The queueing disciplines on a device and their counters, by rtnetlink (as `tc -s qdisc show dev
// DEV` reads them): what the device's egress queue dropped, held back (a shaper's overlimits) and
// holds now, so a slow test can be told apart from a full or shaped queue on this host. Reads run
// in the caller's network namespace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace testio::net {

struct QdiscStats {
  std::string kind;            // "tbf", "htb", "pfifo_fast", "noqueue"...
  std::uint32_t handle = 0, parent = 0;
  bool root = false;           // parent == TC_H_ROOT: its counters cover the whole device's egress
  std::uint64_t bytes = 0, packets = 0;
  std::uint32_t drops = 0, overlimits = 0, requeues = 0, backlog_bytes = 0, qlen = 0;
};

// Parses the messages of an RTM_GETQDISC dump answer (one or several recv() buffers laid end to
// end), keeping those for interface `ifindex`. Bounds-checks every length: the input may be
// anything. Pure; any thread.
std::vector<QdiscStats> parse_qdisc_dump(const unsigned char* data, std::size_t size, int ifindex);
// The qdiscs on `device` (by name) in this network namespace; empty when the device or netlink is
// unavailable. A few syscalls; not for hot paths; any thread.
std::vector<QdiscStats> read_qdiscs(const std::string& device);
// Sum over the root qdisc of each device: what the device's egress dropped and holds. For one
// device's qdiscs, its root qdisc as it is; for several devices' laid together, their roots'
// counters added up (kind, handle and parent the first root's). nullopt when none is a root.
// Pure; any thread.
std::optional<QdiscStats> root_qdisc(const std::vector<QdiscStats>& qdiscs);

}  // namespace testio::net
