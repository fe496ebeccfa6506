// Latency histogram, log-linear as HdrHistogram is: exact below 64 ns, and above that each power
// of two split into 64 buckets, so any recorded value is known to within 1/64 (1.6%). Fixed size,
// no allocation when recording; histograms of different streams merge by adding counts.
// Owner: one thread at a time (a stream's worker while it runs, the lifecycle after join).
#pragma once

#include <array>
#include <cstdint>

namespace testio::stats {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 6;
  static constexpr std::size_t kBuckets = (64 - kSubBucketBits + 1) << kSubBucketBits;

  void record(std::uint64_t value) noexcept;
  void merge(const LatencyHistogram& other) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max() const noexcept { return max_; }
  double mean() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  // The value at or below which `percent` of the recorded values lie (to the bucket's precision,
  // never above the largest value recorded); 0 when empty.
  std::uint64_t percentile(double percent) const noexcept;

  static std::size_t bucket_of(std::uint64_t value) noexcept;
  // Largest value that falls in `bucket`.
  static std::uint64_t bucket_top(std::size_t bucket) noexcept;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  double sum_ = 0;
};

// The percentiles a report's "cdf" gives, the minimum first and the maximum last: enough points to
// draw a distribution's shape (testio plot), its tail included, in a few hundred bytes.
inline constexpr std::array<double, 19> kCdfPercents{0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.5, 99.9, 99.99, 100};

// What a report shows of a histogram, in nanoseconds.
struct LatencySummary {
  std::uint64_t count = 0, min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  double mean_ns = 0;
  std::array<std::uint64_t, kCdfPercents.size()> cdf_ns{};  // at each of kCdfPercents
};
LatencySummary summarize(const LatencyHistogram& histogram) noexcept;

}  // namespace testio::stats
