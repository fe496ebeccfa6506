// What limited a test, direction by direction: one verdict from the figures both sides measured
// (TCP_INFO's time accounting, each thread's CPU, each CPU's softirq share, the receive-drop
// counters, the egress qdisc), with the figures that show it and what to try next. Pure: reads a
// report, touches no socket; the thresholds and why they are what they are: docs/diagnosis.md.
#pragma once

#include <string_view>
#include <vector>

#include "report/test_report.hpp"
#include "report/verdict.hpp"

namespace testio::diagnosis {

// The vocabulary of `limit`, documented in docs/diagnosis.md.
inline constexpr std::string_view kLimits[] = {
    "network",    "receive_window", "receiver_cpu", "peer_receiver",   "sender_cpu",
    "send_buffer", "rate_limit",    "rx_softirq",   "too_few_streams", "unknown"};

// The verdict on each direction `report` covers: its own, then --bidir's reverse. A composed
// test's other workloads share the connections' host and are judged with the first.
std::vector<report::Verdict> diagnose(const report::TestReport& report);

// One direction's verdict; `direction` is "forward" or "reverse".
report::Verdict judge(const report::TestReport& report, std::string_view direction);

}  // namespace testio::diagnosis
