// Each flow's way out of the sending host (net::FlowPath, gathered per side) as the reports show
// it: per flow with -v and in JSON, and the flows per interface with a warning when a hash split
// them less evenly than their count allows.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/test_report.hpp"

namespace testio::report {

struct PathSplit {
  std::vector<std::pair<std::string, std::uint32_t>> flows;  // per interface, in order of first use
  std::uint32_t unknown = 0;                                 // flows whose interface cannot be told
  // Two interfaces or more, and the busiest has two flows or more than the quietest: an even
  // split would differ by one at most.
  bool uneven = false;
};
// The split of `side`'s flows; the NICs it watched (--iface-stats) count too, with no flow.
PathSplit path_split(const SideReport& side);

// "paths sender (client): tb1 8 flows, tb2 8 flows" and the warning, when the flows left by two
// interfaces or more; with `each_flow`, a line per flow first. Empty without paths.
std::string paths_text(const std::string& who, const SideReport& side, bool each_flow);
// Stream `i`'s place on `side`, added to its "testio" object: "path" {"device", "how"},
// "incoming_cpu", (--rx-affinity follow) "worker_cpu" and (--mptcp) "mptcp_subflows", each where
// the side has it.
void add_flow_json(nlohmann::ordered_json& testio, const SideReport& side, std::size_t i);
// {"flows": {"tb1": 8, ...}, "unknown": 0, "uneven": false} for a side's "testio" object.
nlohmann::ordered_json path_split_json(const PathSplit& split);

// Where each flow's packets were processed (SO_INCOMING_CPU): flows per CPU as {"0": 9, "1": 7}
// (null without figures), and "incoming cpus remote (server): cpu0 9 flows, cpu1 7 flows" with,
// when `each_flow`, a line per flow first.
nlohmann::ordered_json incoming_cpus_json(const SideReport& side);
std::string incoming_cpus_text(const std::string& who, const SideReport& side, bool each_flow);

// --mptcp: "mptcp client: 4 connections, 8 subflows (2, 2, 2, 2)", with how many fell back to
// plain TCP; {"connections", "subflows", "fell_back"} (null when no stream of `side` is MPTCP).
std::string mptcp_text(const std::string& who, const SideReport& side);
nlohmann::ordered_json mptcp_json(const SideReport& side);

// --spread even. "tb1 8, tb2 8 flows" and {"tb1": 8, "tb2": 8} (null when not spread).
using SpreadCounts = std::vector<std::pair<std::string, std::uint32_t>>;
std::string spread_counts_text(const SpreadCounts& asked);
nlohmann::ordered_json spread_counts_json(const SpreadCounts& asked);
// The split asked against the split the sender's interfaces measured (their tx bytes over the
// whole test): a line, and {"asked": {...}, "measured_shares": {...}}.
std::string spread_text(const std::string& who, const StartInfo& start, const SideReport& sender);
nlohmann::ordered_json spread_json(const StartInfo& start, const SideReport& sender);

}  // namespace testio::report
