#include "stats/sampler.hpp"

#include <cmath>
#include <limits>

namespace testio::stats {

double IntervalSchedule::next_after(double previous_s) const noexcept {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  // A small epsilon keeps a boundary computed as 2.9999999 from being taken twice.
  constexpr double kEpsilon = 1e-9;
  if (previous_s < omit_ - kEpsilon) {
    if (interval_ <= 0) return omit_;
    double next = (std::floor(previous_s / interval_ + kEpsilon) + 1) * interval_;
    return std::min(next, omit_);
  }
  if (interval_ <= 0) return kInfinity;
  double since_omit = previous_s - omit_;
  return omit_ + (std::floor(since_omit / interval_ + kEpsilon) + 1) * interval_;
}

Sampler::Sampler(const StreamCounters* counters, std::vector<int> fds)
    : counters_(counters), fds_(std::move(fds)), last_bytes_(fds_.size()), last_calls_(fds_.size()), last_datagrams_(fds_.size()) {}

IntervalRecord Sampler::take(double start_s, double end_s, bool omitted) {
  IntervalRecord record;
  record.start_s = start_s;
  record.end_s = end_s;
  record.omitted = omitted;
  record.streams.resize(fds_.size());
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    std::uint64_t bytes = counters_[i].bytes.load(std::memory_order_relaxed);
    std::uint64_t calls = counters_[i].calls.load(std::memory_order_relaxed);
    record.streams[i].bytes = bytes - last_bytes_[i];
    record.streams[i].calls = calls - last_calls_[i];
    last_bytes_[i] = bytes;
    last_calls_[i] = calls;
    const DatagramTally datagrams = counters_[i].datagram_snapshot();
    record.streams[i].udp = datagrams.since(last_datagrams_[i]);
    last_datagrams_[i] = datagrams;
    if (fds_[i] >= 0) record.streams[i].tcp = net::read_tcp_info(fds_[i]);
  }
  return record;
}

}  // namespace testio::stats
