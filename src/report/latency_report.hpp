// Request/response figures: from merged latency histograms to a summary, and its text and JSON.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "config/config.hpp"
#include "report/test_report.hpp"
#include "stats/histogram.hpp"

namespace testio::report {

// "NAME UNIT: min .., p50 .., p90 .., p99 .., p99.9 .., max .., mean .." with ns divided by `scale`.
std::string latency_text(const char* name, const stats::LatencySummary& latency, double scale, const char* unit);
// {"min", "p50", "p90", "p99", "p99_9", "max", "mean"} with ns divided by `scale`.
nlohmann::ordered_json latency_json(const stats::LatencySummary& latency, double scale);

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t message_size, std::uint32_t depth,
                       double seconds);
// "rr: 100000 messages of 1 KiB, depth 1, in 10.00 s: 9876 messages/s; latency us p50 ... max ..."
std::string rr_text(const RrSummary& rr);
nlohmann::ordered_json rr_json(const RrSummary& rr);
// For --rr --raw, where there is no TestReport: one line of text or one JSON line.
void print_rr(std::ostream& out, const RrSummary& rr, const std::string& peer, config::OutputFormat format);

}  // namespace testio::report
