// What the hosts did beside the streams: NIC counters (--iface-stats) per interval and over the
// test, how evenly NICs sharing a load carried it, and each CPU's busy and softirq share. Text
// lines and JSON pieces for both reporters.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/test_report.hpp"

namespace testio::report {

// One NIC over the test's reported window (omitted intervals left out).
struct NicTotal {
  std::string name;
  net::NicCounters moved;
  double seconds = 0;
};
std::vector<NicTotal> nic_totals(const std::vector<stats::IntervalRecord>& intervals);

// NICs sharing a load: each one's part of the bytes in the busier direction (rx or tx, whichever
// moved more over all of them). `uneven` when many flows ran (at least kFlowsPerNic per NIC,
// enough for a hash to give every NIC some) and the quietest NIC carried less than kUnevenNics of
// what the busiest did: the aggregate is then capped near the busiest member's rate.
inline constexpr std::uint32_t kFlowsPerNic = 4;
inline constexpr double kUnevenNics = 0.5;
struct NicBalance {
  bool applies = false;  // two NICs or more
  bool uneven = false;
  std::vector<double> shares;  // per NIC, adding up to 1
  double jain = 0;
};
NicBalance nic_balance(const std::vector<NicTotal>& totals, std::uint32_t connections);

// "[  NIC]" lines for one interval's NICs; empty without --iface-stats.
std::string nic_interval_text(const stats::IntervalRecord& record, char unit);
// Per-NIC totals of a side and, when uneven, the warning; `who` is e.g. "local (client)".
std::string nic_summary_text(const std::string& who, const SideReport& side, std::uint32_t connections, char unit);
// "cores local (client): cpu0 45% busy (12% softirq), ..."; empty when no figures came.
std::string cores_text(const std::string& who, const SideReport& side);

nlohmann::ordered_json nic_interval_json(const stats::IntervalRecord& record);
// Adds "nics", "nic_balance" and "cores" to a side's "testio" object where there are figures.
void add_host_json(nlohmann::ordered_json& side_json, const SideReport& side, std::uint32_t connections);

}  // namespace testio::report
