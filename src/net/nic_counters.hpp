// NIC counters from sysfs (/sys/class/net/IFACE/statistics) and the bonding layout
// (/sys/class/net/BOND/bonding/slaves), read on the control thread once per interval. Every
// reader takes the sysfs root ("/sys" normally) so tests can point at a fake tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/socket.h>

namespace testio::net {

// Cumulative since the interface came up, as the kernel counts them (L2 frames: on Ethernet the
// 14-byte header is included, the FCS is not).
struct NicCounters {
  std::uint64_t rx_bytes = 0, tx_bytes = 0, rx_packets = 0, tx_packets = 0;
  NicCounters operator-(const NicCounters& earlier) const noexcept {
    return {rx_bytes - earlier.rx_bytes, tx_bytes - earlier.tx_bytes, rx_packets - earlier.rx_packets,
            tx_packets - earlier.tx_packets};
  }
};

// What a NIC threw away, cumulative: rx_missed and rx_fifo are frames the device had no ring slot
// or FIFO room for (the host did not take them off fast enough); rx_dropped are those the stack
// dropped on arrival (no buffer, an unknown protocol); tx_dropped those the driver could not send.
struct NicDrops {
  std::uint64_t rx_dropped = 0, rx_missed = 0, rx_fifo = 0, tx_dropped = 0;
  NicDrops operator-(const NicDrops& earlier) const noexcept {
    return {rx_dropped - earlier.rx_dropped, rx_missed - earlier.rx_missed, rx_fifo - earlier.rx_fifo,
            tx_dropped - earlier.tx_dropped};
  }
  std::uint64_t received_lost() const noexcept { return rx_dropped + rx_missed + rx_fifo; }
};

// At most this many interfaces are watched on one side or accepted from a peer, and names are at
// most this long (IFNAMSIZ - 1).
inline constexpr std::size_t kMaxNics = 16;
inline constexpr std::size_t kMaxNicName = 15;

inline const std::string kSysRoot = "/sys";

bool is_valid_nic_name(const std::string& name) noexcept;
bool nic_exists(const std::string& name, const std::string& sys_root = kSysRoot);
std::optional<NicCounters> read_nic_counters(const std::string& name, const std::string& sys_root = kSysRoot);
// NAME's drop counters; nullopt when any of the four cannot be read.
std::optional<NicDrops> read_nic_drops(const std::string& name, const std::string& sys_root = kSysRoot);
// The members of bond NAME (its bonding/slaves file); empty when NAME is not a bond.
std::vector<std::string> bond_members(const std::string& name, const std::string& sys_root = kSysRoot);
// The interface that holds local address `address` (a connected socket's own address: the one
// its route leaves by); empty when none does.
std::string nic_holding(const sockaddr* address);

}  // namespace testio::net
