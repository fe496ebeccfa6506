// Per-CPU busy and softirq shares from /proc/stat, so a receiver stuck on one core shows. Pure
// parsing and arithmetic; reading takes a root directory so tests can point at a fake tree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace testio::stats {

// One "cpuN ..." line of /proc/stat, in clock ticks since boot.
struct CpuTicks {
  std::uint32_t cpu = 0;
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  std::uint64_t total() const noexcept { return user + nice + system + idle + iowait + irq + softirq + steal; }
  std::uint64_t busy() const noexcept { return total() - idle - iowait; }
};

// What one CPU did between two snapshots, as fractions of its time (0..1).
struct CoreShare {
  std::uint32_t cpu = 0;
  double busy = 0;
  double softirq = 0;
};

// At most this many CPUs are read or accepted from a peer.
inline constexpr std::size_t kMaxCores = 1024;

// The per-CPU lines ("cpu0", "cpu1", ...) of /proc/stat text; the aggregate "cpu" line and
// malformed lines are skipped.
std::vector<CpuTicks> parse_proc_stat(std::string_view text);
// Reads ROOT/proc/stat ("" for the real one); empty when it cannot be read.
std::vector<CpuTicks> read_proc_stat(const std::string& root = "");
// Shares of each CPU present in both snapshots (CPUs going offline meanwhile are left out).
std::vector<CoreShare> core_shares(const std::vector<CpuTicks>& before, const std::vector<CpuTicks>& after);

}  // namespace testio::stats
