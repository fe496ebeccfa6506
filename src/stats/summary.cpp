#include "stats/summary.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
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
  const auto zerocopy = counters.zerocopy_snapshot();
  figures.zerocopy_completed = zerocopy.completed;
  figures.zerocopy_copied = zerocopy.copied;
  figures.recv_zerocopy_bytes = counters.recv_zerocopy_bytes.load(std::memory_order_relaxed);
  figures.recv_copied_bytes = counters.recv_copied_bytes.load(std::memory_order_relaxed);
  figures.udp = counters.datagram_snapshot();
  figures.delay = {counters.delay_p50_ns.load(std::memory_order_relaxed), counters.delay_p90_ns.load(std::memory_order_relaxed),
                   counters.delay_p99_ns.load(std::memory_order_relaxed), counters.delay_max_ns.load(std::memory_order_relaxed)};
  return figures;
}

namespace {

std::uint64_t sum_of(const std::vector<StreamFigures>& streams, std::uint64_t StreamFigures::*field) noexcept {
  std::uint64_t sum = 0;
  for (const StreamFigures& stream : streams) sum += stream.*field;
  return sum;
}

}  // namespace

ZeroCopySummary zerocopy_summary(const std::vector<StreamFigures>& streams) noexcept {
  return {sum_of(streams, &StreamFigures::zerocopy_completed), sum_of(streams, &StreamFigures::zerocopy_copied)};
}

ReceiveZeroCopySummary receive_zerocopy_summary(const std::vector<StreamFigures>& streams) noexcept {
  return {sum_of(streams, &StreamFigures::recv_zerocopy_bytes), sum_of(streams, &StreamFigures::recv_copied_bytes)};
}

Balance balance_of(const std::vector<double>& values) noexcept {
  Balance balance;
  if (values.empty()) return balance;
  double sum = 0, sum_squares = 0;
  balance.min = std::numeric_limits<double>::max();
  for (double value : values) {
    sum += value;
    sum_squares += value * value;
    balance.min = std::min(balance.min, value);
    balance.max = std::max(balance.max, value);
  }
  double n = static_cast<double>(values.size());
  balance.mean = sum / n;
  balance.stddev = std::sqrt(std::max(0.0, sum_squares / n - balance.mean * balance.mean));
  balance.jain = sum_squares > 0 ? sum * sum / (n * sum_squares) : 1.0;
  return balance;
}

std::vector<double> stream_rates(const std::vector<StreamFigures>& streams) {
  std::vector<double> rates;
  rates.reserve(streams.size());
  for (const StreamFigures& stream : streams)
    rates.push_back(util::bits_per_second(stream.bytes, stream.seconds()));
  return rates;
}

std::vector<StreamFigures> excluding_omitted(const std::vector<StreamFigures>& totals,
                                             const std::vector<IntervalRecord>& intervals) {
  std::vector<StreamFigures> kept = totals;
  double omit_end = -1;
  for (const IntervalRecord& record : intervals) {
    if (!record.omitted) continue;
    omit_end = std::max(omit_end, record.end_s);
    for (std::size_t i = 0; i < kept.size() && i < record.streams.size(); ++i) {
      kept[i].bytes -= std::min(kept[i].bytes, record.streams[i].bytes);
      kept[i].calls -= std::min(kept[i].calls, record.streams[i].calls);
      const DatagramTally& omitted = record.streams[i].udp;
      DatagramTally& udp = kept[i].udp;
      for (auto field : {&DatagramTally::datagrams, &DatagramTally::lost, &DatagramTally::out_of_order,
                         &DatagramTally::duplicates, &DatagramTally::socket_drops, &DatagramTally::strays})
        udp.*field -= std::min(udp.*field, omitted.*field);
    }
  }
  if (omit_end >= 0)
    for (StreamFigures& stream : kept) {
      stream.start_s = std::max(stream.start_s, omit_end);
      stream.end_s = std::max(stream.end_s, stream.start_s);
    }
  return kept;
}

CpuTimes CpuTimes::now() noexcept {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

CpuUsage cpu_usage(const CpuTimes& used, double wall_s, std::uint64_t bytes) noexcept {
  CpuUsage usage;
  if (wall_s > 0) {
    usage.user_percent = 100.0 * used.user_s / wall_s;
    usage.system_percent = 100.0 * used.system_s / wall_s;
    usage.total_percent = usage.user_percent + usage.system_percent;
  }
  if (bytes > 0) usage.seconds_per_gb = (used.user_s + used.system_s) / (static_cast<double>(bytes) / 1e9);
  return usage;
}

TcpSummary tcp_summary(const std::vector<IntervalRecord>& intervals, std::size_t stream) noexcept {
  TcpSummary summary;
  double rtt_sum = 0;
  std::size_t samples = 0;
  for (const IntervalRecord& record : intervals) {
    if (stream >= record.streams.size() || !record.streams[stream].tcp.valid) continue;
    const net::TcpInfo& tcp = record.streams[stream].tcp;
    summary.min_rtt_us = samples == 0 ? tcp.rtt_us : std::min(summary.min_rtt_us, tcp.rtt_us);
    summary.max_rtt_us = std::max(summary.max_rtt_us, tcp.rtt_us);
    summary.max_snd_cwnd = std::max(summary.max_snd_cwnd, tcp.snd_cwnd_bytes);
    summary.retransmits = tcp.total_retrans;
    summary.last_delivery_rate_bps = tcp.delivery_rate_bps;
    rtt_sum += tcp.rtt_us;
    ++samples;
  }
  summary.valid = samples > 0;
  if (samples) summary.mean_rtt_us = rtt_sum / static_cast<double>(samples);
  return summary;
}

std::uint64_t share_of_total(std::uint64_t total, std::uint32_t connections,
                             std::uint32_t index) noexcept {
  if (connections == 0) return 0;
  std::uint64_t base = total / connections;
  return base + (index < total % connections ? 1 : 0);
}

std::uint64_t offset_of_share(std::uint64_t total, std::uint32_t connections, std::uint32_t index) noexcept {
  if (connections == 0) return 0;
  return index * (total / connections) + std::min<std::uint64_t>(index, total % connections);
}

}  // namespace testio::stats
