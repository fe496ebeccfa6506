// A datagram test's figures (-u, testio's or iperf3's): each flow's sent datagrams beside the ones
// its receiver counted, the loss between them and the part of it the receiving socket itself
// dropped, in iperf3's -u JSON keys and the interval lines. The UDP workload's own part (its fast
// paths, the host's counters, the loss lines below the table) is its section
// (workloads/udp/udp_section.*), which builds on these.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/test_report.hpp"

namespace testio::report {

struct FlowLoss {
  std::uint64_t sent = 0;          // datagrams the sender sent (0 when its figures are absent)
  std::uint64_t received = 0;      // distinct datagrams the receiver counted
  std::uint64_t lost = 0;          // sent - received; without the sender's count, the receiver's gaps
  std::uint64_t out_of_order = 0, duplicates = 0, socket_drops = 0, strays = 0;
  double jitter_ms = 0;            // a sum's: the mean of its flows', as iperf3's
  double lost_percent() const noexcept;
  std::uint64_t expected() const noexcept { return sent ? sent : received + lost; }
};

// A direction's flows, and their sum. `sent` or `received` may be empty (that side's figures absent).
std::vector<FlowLoss> flow_losses(const std::vector<stats::StreamFigures>& sent,
                                  const std::vector<stats::StreamFigures>& received);
FlowLoss sum_of(const std::vector<FlowLoss>& flows);

// One side's own count of a flow: datagrams, and on a receiver its gaps (with the end marker's
// count, every datagram it never saw), late and repeated ones, its socket's drops, strays, jitter.
nlohmann::ordered_json udp_stream_json(const stats::DatagramTally& tally);

// iperf3's interval keys: a sender's "packets"; a receiver's jitter_ms, lost_packets, packets, lost_percent.
void add_udp_interval_json(nlohmann::ordered_json& entry, const stats::DatagramTally& tally, bool sender);
// end.streams[i].udp, end.sum, and the udp keys of sum_sent and sum_received.
void add_udp_end_json(nlohmann::ordered_json& end, const TestReport& report);
// One-way delay percentiles in us: {"p50", "p90", "p99", "max"}.
nlohmann::ordered_json one_way_delay_json(const stats::DelayFigures& delay);

// ", 1234 datagrams" (sender) or ", lost 12/1234 (0.97%), jitter 0.011 ms, socket drops 12".
std::string udp_interval_text(const stats::DatagramTally& tally, bool sender);

}  // namespace testio::report
