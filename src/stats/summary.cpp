#include "stats/summary.hpp"

#include <algorithm>
#include <limits>

#include "util/units.hpp"

namespace testio::stats {

SideSummary summarize(const std::vector<StreamFigures>& streams) noexcept {
  SideSummary summary;
  if (streams.empty()) return summary;
  double start = std::numeric_limits<double>::max();
  double end = 0;
  summary.min_stream_bps = std::numeric_limits<double>::max();
  for (const StreamFigures& stream : streams) {
    summary.bytes += stream.bytes;
    summary.calls += stream.calls;
    if (stream.failed) ++summary.failed_streams;
    start = std::min(start, stream.start_s);
    end = std::max(end, stream.end_s);
    double bps = util::bits_per_second(stream.bytes, stream.seconds());
    summary.min_stream_bps = std::min(summary.min_stream_bps, bps);
    summary.max_stream_bps = std::max(summary.max_stream_bps, bps);
  }
  summary.seconds = end > start ? end - start : 0;
  summary.bits_per_second = util::bits_per_second(summary.bytes, summary.seconds);
  return summary;
}

StreamFigures figures_from(const StreamCounters& counters, double window_start_s) noexcept {
  StreamFigures figures;
  figures.bytes = counters.bytes.load(std::memory_order_relaxed);
  figures.calls = counters.calls.load(std::memory_order_relaxed);
  TestNanos first = counters.first_byte_ns.load(std::memory_order_relaxed);
  TestNanos last = counters.last_byte_ns.load(std::memory_order_relaxed);
  figures.start_s = first < 0 ? window_start_s : static_cast<double>(first) * 1e-9;
  figures.end_s = last < 0 ? figures.start_s : static_cast<double>(last) * 1e-9;
  figures.failed = counters.failed.load(std::memory_order_relaxed);
  return figures;
}

std::uint64_t share_of_total(std::uint64_t total, std::uint32_t connections,
                             std::uint32_t index) noexcept {
  if (connections == 0) return 0;
  std::uint64_t base = total / connections;
  return base + (index < total % connections ? 1 : 0);
}

}  // namespace testio::stats
