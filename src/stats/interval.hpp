// Interval records: what moved on each stream between two sampler ticks, with the stream's
// TCP_INFO at the tick. Plain values, made on the control thread, read by reporters.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "net/nic_counters.hpp"
#include "net/tcp_info.hpp"
#include "stats/counters.hpp"

namespace testio::stats {

struct StreamSample {
  std::uint64_t bytes = 0;   // moved during the interval
  std::uint64_t calls = 0;
  net::TcpInfo tcp;          // at the interval's end
  DatagramTally udp{};       // a UDP flow's datagrams during the interval
};

// What one watched NIC moved during an interval (--iface-stats), from its kernel counters.
struct NicSample {
  std::string name;
  net::NicCounters moved;
};

struct IntervalRecord {
  double start_s = 0;
  double end_s = 0;
  bool omitted = false;      // inside -O: shown, but left out of the summary
  std::vector<StreamSample> streams;
  std::vector<NicSample> nics;  // empty without --iface-stats
  // A workload's own figures of the interval, by name (latency probes: each kind's count and p50),
  // for the live reports; this side's only (they do not travel to the peer).
  std::vector<std::pair<std::string, double>> figures;

  double seconds() const noexcept { return end_s - start_s; }
  std::uint64_t bytes() const noexcept {
    std::uint64_t total = 0;
    for (const StreamSample& stream : streams) total += stream.bytes;
    return total;
  }
};

// Where interval boundaries fall: k*interval inside the omit period, the omit boundary itself,
// then omit + k*interval. Absolute offsets from the test start, so ticks never drift.
class IntervalSchedule {
 public:
  IntervalSchedule(double interval_s, double omit_s) noexcept : interval_(interval_s), omit_(omit_s) {}
  // The first boundary after `previous_s`; +infinity when there is none (-i 0, past the omit).
  double next_after(double previous_s) const noexcept;
  bool omitted(double interval_start_s) const noexcept { return interval_start_s < omit_; }
  double omit_s() const noexcept { return omit_; }

 private:
  double interval_;
  double omit_;
};

}  // namespace testio::stats
