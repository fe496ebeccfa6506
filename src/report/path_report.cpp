#include "report/path_report.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "report/format.hpp"

namespace testio::report {

using json = nlohmann::ordered_json;

PathSplit path_split(const SideReport& side) {
  PathSplit split;
  auto count = [&](const std::string& device, std::uint32_t flows) {
    auto found = std::find_if(split.flows.begin(), split.flows.end(), [&](const auto& entry) { return entry.first == device; });
    if (found == split.flows.end())
      split.flows.emplace_back(device, flows);
    else
      found->second += flows;
  };
  for (const net::FlowPath& path : side.paths) {
    if (path.device == net::kUnknownDevice)
      ++split.unknown;
    else
      count(path.device, 1);
  }
  if (!side.intervals.empty())
    for (const stats::NicSample& nic : side.intervals.front().nics) count(nic.name, 0);
  if (split.flows.size() >= 2) {
    auto [fewest, most] = std::minmax_element(split.flows.begin(), split.flows.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
    split.uneven = most->second >= fewest->second + 2;
  }
  return split;
}

std::string paths_text(const std::string& who, const SideReport& side, bool each_flow) {
  if (side.paths.empty()) return "";
  std::string text;
  if (each_flow)
    for (std::size_t i = 0; i < side.paths.size(); ++i)
      text += printf_text("[%3zu] leaves %s by %s (%s)\n", i + 1, who.c_str(), side.paths[i].device.c_str(),
                          side.paths[i].how.c_str());
  const PathSplit split = path_split(side);
  if (split.flows.size() < 2) return text;
  std::string counts;
  for (const auto& [device, flows] : split.flows)
    counts += (counts.empty() ? "" : ", ") + device + " " + std::to_string(flows) + (flows == 1 ? " flow" : " flows");
  if (split.unknown) counts += ", " + std::to_string(split.unknown) + " unknown";
  text += "paths " + who + ": " + counts + "\n";
  if (split.uneven)
    text += "WARNING: the flows leave " + who + " unevenly (" + counts +
            "): the route's or bond's hash put more on one interface; see docs/tuning.md\n";
  return text;
}

void add_flow_json(json& testio, const SideReport& side, std::size_t i) {
  if (i < side.paths.size()) testio["path"] = {{"device", side.paths[i].device}, {"how", side.paths[i].how}};
  if (i < side.incoming_cpus.size() && side.incoming_cpus[i] >= 0) testio["incoming_cpu"] = side.incoming_cpus[i];
  if (i < side.worker_cpus.size() && side.worker_cpus[i] >= 0) testio["worker_cpu"] = side.worker_cpus[i];
  if (i < side.mptcp_subflows.size()) testio["mptcp_subflows"] = side.mptcp_subflows[i];
}

json path_split_json(const PathSplit& split) {
  json flows = json::object();
  for (const auto& [device, count] : split.flows) flows[device] = count;
  return {{"flows", std::move(flows)}, {"unknown", split.unknown}, {"uneven", split.uneven}};
}

namespace {

std::map<int, std::uint32_t> flows_per_cpu(const SideReport& side) {
  std::map<int, std::uint32_t> flows;
  for (int cpu : side.incoming_cpus)
    if (cpu >= 0) ++flows[cpu];
  return flows;
}

}  // namespace

json incoming_cpus_json(const SideReport& side) {
  const std::map<int, std::uint32_t> flows = flows_per_cpu(side);
  if (flows.empty()) return nullptr;
  json counts = json::object();
  for (const auto& [cpu, count] : flows) counts[std::to_string(cpu)] = count;
  return counts;
}

std::string incoming_cpus_text(const std::string& who, const SideReport& side, bool each_flow) {
  const std::map<int, std::uint32_t> flows = flows_per_cpu(side);
  if (flows.empty()) return "";
  std::string text;
  if (each_flow)
    for (std::size_t i = 0; i < side.incoming_cpus.size(); ++i)
      if (side.incoming_cpus[i] >= 0)
        text += printf_text("[%3zu] arrives at %s on cpu%d\n", i + 1, who.c_str(), side.incoming_cpus[i]);
  std::string counts;
  for (const auto& [cpu, count] : flows)
    counts += (counts.empty() ? "cpu" : ", cpu") + std::to_string(cpu) + " " + std::to_string(count) +
              (count == 1 ? " flow" : " flows");
  return text + "incoming cpus " + who + ": " + counts + "\n";
}

namespace {

struct MptcpTally {
  std::uint32_t subflows = 0, fell_back = 0;
};

MptcpTally mptcp_tally(const SideReport& side) {
  MptcpTally tally;
  for (int count : side.mptcp_subflows) {
    tally.subflows += static_cast<std::uint32_t>(count);
    if (count == 0) ++tally.fell_back;
  }
  return tally;
}

}  // namespace

std::string mptcp_text(const std::string& who, const SideReport& side) {
  if (side.mptcp_subflows.empty()) return "";
  const auto [subflows, fell_back] = mptcp_tally(side);
  std::string each;
  for (int count : side.mptcp_subflows) each += (each.empty() ? "" : ", ") + std::to_string(count);
  const std::size_t connections = side.mptcp_subflows.size();
  std::string text = printf_text("mptcp %s: %zu %s, %u %s", who.c_str(), connections,
                                 connections == 1 ? "connection" : "connections", subflows,
                                 subflows == 1 ? "subflow" : "subflows");
  if (connections <= 16) text += " (" + each + ")";
  if (fell_back) text += printf_text("; %u fell back to plain TCP", fell_back);
  return text + "\n";
}

json mptcp_json(const SideReport& side) {
  if (side.mptcp_subflows.empty()) return nullptr;
  const auto [subflows, fell_back] = mptcp_tally(side);
  return {{"connections", side.mptcp_subflows.size()}, {"subflows", subflows}, {"fell_back", fell_back}};
}

std::string spread_counts_text(const SpreadCounts& asked) {
  std::string text;
  for (const auto& [device, flows] : asked) text += (text.empty() ? "" : ", ") + device + " " + std::to_string(flows);
  return text + " flows";
}

json spread_counts_json(const SpreadCounts& asked) {
  if (asked.empty()) return nullptr;
  json counts = json::object();
  for (const auto& [device, flows] : asked) counts[device] = flows;
  return counts;
}

namespace {

// Each spread interface's share of the bytes the spread interfaces sent over every interval.
std::vector<double> measured_shares(const SpreadCounts& asked, const SideReport& sender) {
  std::vector<double> sent(asked.size(), 0);
  double all = 0;
  for (const stats::IntervalRecord& record : sender.intervals)
    for (const stats::NicSample& nic : record.nics)
      for (std::size_t k = 0; k < asked.size(); ++k)
        if (asked[k].first == nic.name) {
          sent[k] += static_cast<double>(nic.moved.tx_bytes);
          all += static_cast<double>(nic.moved.tx_bytes);
        }
  for (double& share : sent) share = all > 0 ? share / all : 0;
  return sent;
}

}  // namespace

std::string spread_text(const std::string& who, const StartInfo& start, const SideReport& sender) {
  if (start.spread_asked.empty()) return "";
  const std::vector<double> shares = measured_shares(start.spread_asked, sender);
  std::string measured;
  for (std::size_t k = 0; k < shares.size(); ++k)
    measured += (k ? ", " : "") + start.spread_asked[k].first + printf_text(" %.1f%%", shares[k] * 100);
  return "spread even " + who + ": asked " + spread_counts_text(start.spread_asked) + "; the interfaces sent " +
         measured + " of the bytes\n";
}

json spread_json(const StartInfo& start, const SideReport& sender) {
  const std::vector<double> shares = measured_shares(start.spread_asked, sender);
  json measured = json::object();
  for (std::size_t k = 0; k < shares.size(); ++k) measured[start.spread_asked[k].first] = shares[k];
  return {{"asked", spread_counts_json(start.spread_asked)}, {"measured_shares", std::move(measured)}};
}

}  // namespace testio::report
