// A latency distribution in text and JSON, for every workload section that times something
// (request/response round trips, connects, transfers).
#pragma once

#include <array>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "stats/histogram.hpp"

namespace testio::report {

// "NAME UNIT: min .., p50 .., p90 .., p99 .., p99.9 .., max .., mean .." with ns divided by `scale`.
std::string latency_text(const char* name, const stats::LatencySummary& latency, double scale, const char* unit);
// {"min", "p50", "p90", "p99", "p99_9", "max", "mean", "cdf"} with ns divided by `scale`; "cdf" is
// [[percent, value], ...] at stats::kCdfPercents (empty without samples).
nlohmann::ordered_json latency_json(const stats::LatencySummary& latency, double scale);
// A distribution's "cdf": [[percent, value / scale], ...], one pair per stats::kCdfPercents; empty
// for a distribution of no samples.
nlohmann::ordered_json cdf_json(const std::array<double, stats::kCdfPercents.size()>& values, bool any, double scale);

}  // namespace testio::report
