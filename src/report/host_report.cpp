#include "report/host_report.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "report/format.hpp"
#include "report/path_report.hpp"
#include "util/units.hpp"

namespace testio::report {
namespace {

using json = nlohmann::ordered_json;

std::string rx_tx_text(const net::NicCounters& moved, double seconds, char unit) {
  return "rx " + util::format_rate(util::bits_per_second(moved.rx_bytes, seconds), unit) + " " +
         std::to_string(moved.rx_packets) + " packets, tx " +
         util::format_rate(util::bits_per_second(moved.tx_bytes, seconds), unit) + " " +
         std::to_string(moved.tx_packets) + " packets";
}

json nic_json(const std::string& name, const net::NicCounters& moved, double seconds) {
  return {{"name", name},
          {"rx_bytes", moved.rx_bytes},
          {"tx_bytes", moved.tx_bytes},
          {"rx_packets", moved.rx_packets},
          {"tx_packets", moved.tx_packets},
          {"rx_bits_per_second", util::bits_per_second(moved.rx_bytes, seconds)},
          {"tx_bits_per_second", util::bits_per_second(moved.tx_bytes, seconds)}};
}

}  // namespace

std::vector<NicTotal> nic_totals(const std::vector<stats::IntervalRecord>& intervals) {
  std::vector<NicTotal> totals;
  for (const stats::IntervalRecord& record : intervals) {
    if (record.omitted) continue;
    for (const stats::NicSample& nic : record.nics) {
      auto found = std::find_if(totals.begin(), totals.end(), [&](const NicTotal& t) { return t.name == nic.name; });
      if (found == totals.end()) {
        totals.push_back({nic.name, {}, 0});
        found = totals.end() - 1;
      }
      found->moved.rx_bytes += nic.moved.rx_bytes;
      found->moved.tx_bytes += nic.moved.tx_bytes;
      found->moved.rx_packets += nic.moved.rx_packets;
      found->moved.tx_packets += nic.moved.tx_packets;
      found->seconds += record.seconds();
    }
  }
  return totals;
}

NicBalance nic_balance(const std::vector<NicTotal>& totals, std::uint32_t connections) {
  NicBalance balance;
  if (totals.size() < 2) return balance;
  balance.applies = true;
  std::uint64_t rx = 0, tx = 0;
  for (const NicTotal& nic : totals) {
    rx += nic.moved.rx_bytes;
    tx += nic.moved.tx_bytes;
  }
  const bool use_rx = rx >= tx;
  const double all = static_cast<double>(use_rx ? rx : tx);
  std::vector<double> bytes;
  for (const NicTotal& nic : totals) bytes.push_back(static_cast<double>(use_rx ? nic.moved.rx_bytes : nic.moved.tx_bytes));
  for (double value : bytes) balance.shares.push_back(all > 0 ? value / all : 0);
  balance.jain = stats::balance_of(bytes).jain;
  auto [quietest, busiest] = std::minmax_element(bytes.begin(), bytes.end());
  const bool many_flows = connections >= kFlowsPerNic * totals.size();
  balance.uneven = many_flows && *busiest > 0 && *quietest < kUnevenNics * *busiest;
  return balance;
}

std::string nic_interval_text(const stats::IntervalRecord& record, char unit) {
  std::string text;
  for (const stats::NicSample& nic : record.nics)
    text += printf_text("[%5s] %-15s ", "NIC", nic.name.c_str()) + rx_tx_text(nic.moved, record.seconds(), unit) + "\n";
  return text;
}

std::string nic_summary_text(const std::string& who, const SideReport& side, std::uint32_t connections, char unit) {
  std::vector<NicTotal> totals = nic_totals(side.intervals);
  std::string text;
  if (!totals.empty() && !side.nics_reason.empty()) text += "nics " + who + ": " + side.nics_reason + "\n";
  for (const NicTotal& nic : totals) text += "nic " + who + " " + nic.name + ": " + rx_tx_text(nic.moved, nic.seconds, unit) + "\n";
  NicBalance balance = nic_balance(totals, connections);
  if (!balance.applies) return text;
  std::string shares;
  for (std::size_t i = 0; i < totals.size(); ++i)
    shares += (i ? ", " : "") + totals[i].name + printf_text(" %.0f%%", balance.shares[i] * 100);
  text += "nic balance " + who + ": " + shares + printf_text(" of the bytes, Jain's index %.3f\n", balance.jain);
  if (balance.uneven)
    text += "WARNING: the NICs of " + who + " carried " + std::to_string(connections) +
            " connections unevenly (" + shares + "): a bond's hash put more flows on one member\n";
  return text;
}

std::string cores_text(const std::string& who, const SideReport& side) {
  if (side.cores.empty()) return "";
  std::string text = "cores " + who + ":";
  for (std::size_t i = 0; i < side.cores.size(); ++i) {
    const stats::CoreShare& core = side.cores[i];
    text += printf_text("%s cpu%u %.0f%% busy (%.0f%% softirq)", i ? "," : "", core.cpu, core.busy * 100,
                        core.softirq * 100);
  }
  return text + "\n";
}

json nic_interval_json(const stats::IntervalRecord& record) {
  json nics = json::array();
  for (const stats::NicSample& nic : record.nics) nics.push_back(nic_json(nic.name, nic.moved, record.seconds()));
  return nics;
}

void add_host_json(json& side_json, const SideReport& side, std::uint32_t connections) {
  if (!side.paths.empty()) side_json["paths"] = path_split_json(path_split(side));
  if (json cpus = incoming_cpus_json(side); !cpus.is_null()) side_json["incoming_cpus"] = std::move(cpus);
  if (json mptcp = mptcp_json(side); !mptcp.is_null()) side_json["mptcp"] = std::move(mptcp);
  std::vector<NicTotal> totals = nic_totals(side.intervals);
  if (!side.nics_reason.empty()) side_json["nics_reason"] = side.nics_reason;
  if (!totals.empty()) {
    json nics = json::array();
    for (const NicTotal& nic : totals) nics.push_back(nic_json(nic.name, nic.moved, nic.seconds));
    side_json["nics"] = std::move(nics);
    NicBalance balance = nic_balance(totals, connections);
    if (balance.applies)
      side_json["nic_balance"] = {{"shares", balance.shares}, {"jain_fairness_index", balance.jain},
                                  {"uneven", balance.uneven}};
  }
  if (!side.cores.empty()) {
    json cores = json::array();
    for (const stats::CoreShare& core : side.cores)
      cores.push_back({{"cpu", core.cpu}, {"busy_percent", core.busy * 100}, {"softirq_percent", core.softirq * 100}});
    side_json["cores"] = std::move(cores);
  }
}

}  // namespace testio::report
