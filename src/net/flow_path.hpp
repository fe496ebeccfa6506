// Which interface a flow's packets leave by, as far as the kernel lets a program tell: the
// route's nexthop for the flow's addresses and ports (route_lookup); below a VLAN or macvlan its
// lower device; below a bond the member its transmit hash picks (layer3+4 in balance-xor and
// 802.3ad, the active member in active-backup), from the bond's sysfs settings. And, for
// --iface-stats's default, every interface the route to a peer spreads over. Reads sysfs under
// `sys_root` (tests point it at a fake tree); any thread; not for hot paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "net/nic_counters.hpp"

namespace testio::net {

inline constexpr std::size_t kMaxPathHow = 48;      // the longest `how` a path carries
inline constexpr std::size_t kMaxNicsReason = 256;  // ... and ChosenNics::reason
inline const std::string kUnknownDevice = "unknown";

struct FlowPath {
  std::string device = kUnknownDevice;  // the interface the flow leaves by
  std::string how;                      // how that was told ("multipath route"), or why it cannot be
};

// The flow from `local` to `remote` (a connected TCP socket's two ends).
FlowPath flow_path(const sockaddr* local, const sockaddr* remote, const std::string& sys_root = kSysRoot);

// The member a bond's layer3+4 hash picks among `members` usable ones for a TCP or UDP packet
// from `local` to `remote`, as the kernel's bond_xmit_hash computes it for an unencapsulated packet:
// the ports word, XOR both addresses (an IPv6 address folded to 32 bits), folded, lowest bit
// dropped, modulo the count.
std::uint32_t layer34_member(const sockaddr* local, const sockaddr* remote, std::uint32_t members);

// The bond `device` is or stands on (through VLANs and macvlans); empty when there is none.
std::string bond_below(const std::string& device, const std::string& sys_root = kSysRoot);
// A bond's members that can send now, in the bond's order: those its transmit hash chooses from.
std::vector<std::string> usable_bond_members(const std::string& bond, const std::string& sys_root = kSysRoot);

// The interfaces below `device` that carry its packets: a bond's members, a VLAN's or macvlan's
// lower device (and what is below that), else `device` itself.
std::vector<std::string> carrying_devices(const std::string& device, const std::string& sys_root = kSysRoot);

// --iface-stats's default: what the route from `local` to `remote` leaves by (every nexthop of a
// multipath route, each expanded by carrying_devices), and a sentence saying so.
struct ChosenNics {
  std::vector<std::string> names;
  std::string reason;
  // Adds `name` if it exists here and is not there yet, up to kMaxNics.
  void add(const std::string& name, const std::string& sys_root);
};
ChosenNics nics_toward(const sockaddr* local, const sockaddr* remote, const std::string& sys_root = kSysRoot);
// The NICs to watch: each of `asked` that exists here (expanded by carrying_devices), at most
// kMaxNics, no repeats; when none of them does (or none was asked), nics_toward's choice.
ChosenNics choose_nics(const std::vector<std::string>& asked, const sockaddr* local, const sockaddr* remote,
                       const std::string& sys_root = kSysRoot);

}  // namespace testio::net
