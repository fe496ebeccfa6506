// Plain figures for one side of a test and the arithmetic over them: totals, rates, balance.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/counters.hpp"
#include "stats/interval.hpp"

namespace testio::stats {

// What one side measured for one stream. Times are seconds since that side's test start.
struct StreamFigures {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
  double start_s = 0;
  double end_s = 0;
  bool failed = false;
  // Zero-copy figures, carried by the protocol as optional fields (absent: 0): --send-mode
  // zerocopy's completed sends and those the kernel copied; --recv-mode splice/mmap's bytes kept
  // out of a user buffer and bytes copied into one.
  std::uint64_t zerocopy_completed = 0;
  std::uint64_t zerocopy_copied = 0;
  std::uint64_t recv_zerocopy_bytes = 0;
  std::uint64_t recv_copied_bytes = 0;
  DatagramTally udp{};  // a UDP flow's datagrams (absent on the wire: none)
  DelayFigures delay{};  // a UDP receiver's one-way delays (absent: not measured)

  double seconds() const noexcept { return end_s > start_s ? end_s - start_s : 0; }
  double bytes_per_call() const noexcept {
    return calls ? static_cast<double>(bytes) / static_cast<double>(calls) : 0;
  }
};

// Sums and spread over a side's streams. The window runs from the earliest start to the latest
// end, so a stream that starts late or ends early does not stretch or shrink the total.
struct SideSummary {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
  double seconds = 0;
  double bits_per_second = 0;
  double min_stream_bps = 0;
  double max_stream_bps = 0;
  std::size_t failed_streams = 0;
};

SideSummary summarize(const std::vector<StreamFigures>& streams) noexcept;

// --send-mode zerocopy: sends the kernel reported done, and how many of them it copied after all.
struct ZeroCopySummary {
  std::uint64_t completed = 0;
  std::uint64_t copied = 0;
  double zero_copy_share() const noexcept {
    return completed ? static_cast<double>(completed - copied) / static_cast<double>(completed) : 0;
  }
};
ZeroCopySummary zerocopy_summary(const std::vector<StreamFigures>& streams) noexcept;

// --recv-mode splice/mmap: bytes received without a copy into a user buffer, and with one. Over
// the whole test (-O included): a share, not a rate.
struct ReceiveZeroCopySummary {
  std::uint64_t zero_copy_bytes = 0;
  std::uint64_t copied_bytes = 0;
  std::uint64_t total() const noexcept { return zero_copy_bytes + copied_bytes; }
  double zero_copy_share() const noexcept {
    return total() ? static_cast<double>(zero_copy_bytes) / static_cast<double>(total()) : 0;
  }
};
ReceiveZeroCopySummary receive_zerocopy_summary(const std::vector<StreamFigures>& streams) noexcept;

// A snapshot of live counters; `window_end_s` stands in for streams that sent nothing.
StreamFigures figures_from(const StreamCounters& counters, double window_start_s) noexcept;

// Spread of per-stream rates. Jain's fairness index is (sum x)^2 / (n * sum x^2): 1 when all
// streams are equal, 1/n when one stream carries everything (how a bond hashing flows unevenly shows).
struct Balance {
  double min = 0, max = 0, mean = 0, stddev = 0, jain = 0;
};
Balance balance_of(const std::vector<double>& values) noexcept;
std::vector<double> stream_rates(const std::vector<StreamFigures>& streams);

// Totals with the omitted (-O) intervals taken out: what the summary reports. Unchanged when
// nothing was omitted.
std::vector<StreamFigures> excluding_omitted(const std::vector<StreamFigures>& totals,
                                             const std::vector<IntervalRecord>& intervals);

// User and system CPU time of this process (every thread), from getrusage(RUSAGE_SELF).
struct CpuTimes {
  double user_s = 0;
  double system_s = 0;
  static CpuTimes now() noexcept;
  CpuTimes operator-(const CpuTimes& earlier) const noexcept {
    return {user_s - earlier.user_s, system_s - earlier.system_s};
  }
};

// CPU over a test: % of one core, and CPU-seconds per GB (1e9 bytes) moved.
struct CpuUsage {
  double user_percent = 0, system_percent = 0, total_percent = 0;
  double seconds_per_gb = 0;
};
CpuUsage cpu_usage(const CpuTimes& used, double wall_s, std::uint64_t bytes) noexcept;

// TCP_INFO over one stream's intervals: what iperf3 reports per sender stream at the end.
struct TcpSummary {
  bool valid = false;
  std::uint32_t retransmits = 0;   // total_retrans at the last valid sample
  std::uint32_t max_snd_cwnd = 0;
  std::uint32_t min_rtt_us = 0, max_rtt_us = 0;
  double mean_rtt_us = 0;
  std::uint64_t last_delivery_rate_bps = 0;
};
TcpSummary tcp_summary(const std::vector<IntervalRecord>& intervals, std::size_t stream) noexcept;

// Bytes each of `connections` streams sends so that they add up to exactly `total`.
std::uint64_t share_of_total(std::uint64_t total, std::uint32_t connections,
                             std::uint32_t index) noexcept;
// Where stream `index`'s share starts when the shares are laid end to end (-F: its part of the file).
std::uint64_t offset_of_share(std::uint64_t total, std::uint32_t connections, std::uint32_t index) noexcept;

}  // namespace testio::stats
