// Plain figures for one side of a test and the arithmetic over them: totals, rates, balance.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/counters.hpp"

namespace testio::stats {

// What one side measured for one stream. Times are seconds since that side's test start.
struct StreamFigures {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
  double start_s = 0;
  double end_s = 0;
  bool failed = false;

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

// A snapshot of live counters; `window_end_s` stands in for streams that sent nothing.
StreamFigures figures_from(const StreamCounters& counters, double window_start_s) noexcept;

// Bytes each of `connections` streams sends so that they add up to exactly `total`.
std::uint64_t share_of_total(std::uint64_t total, std::uint32_t connections,
                             std::uint32_t index) noexcept;

}  // namespace testio::stats
