#include "stats/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace testio::stats {

namespace {
constexpr std::uint64_t kSubBuckets = 1ull << LatencyHistogram::kSubBucketBits;
}  // namespace

std::size_t LatencyHistogram::bucket_of(std::uint64_t value) noexcept {
  if (value < kSubBuckets) return static_cast<std::size_t>(value);
  // Top bit at `exponent`; the kSubBucketBits bits below it pick the sub-bucket.
  int exponent = std::bit_width(value) - 1;
  int shift = exponent - kSubBucketBits;
  std::uint64_t sub = (value >> shift) & (kSubBuckets - 1);
  return static_cast<std::size_t>(kSubBuckets + static_cast<std::uint64_t>(shift) * kSubBuckets + sub);
}

std::uint64_t LatencyHistogram::bucket_top(std::size_t bucket) noexcept {
  if (bucket < kSubBuckets) return bucket;
  std::uint64_t shift = (bucket - kSubBuckets) / kSubBuckets;
  std::uint64_t sub = (bucket - kSubBuckets) % kSubBuckets;
  std::uint64_t base = (kSubBuckets + sub) << shift;
  return base + ((1ull << shift) - 1);
}

void LatencyHistogram::record(std::uint64_t value) noexcept {
  ++counts_[bucket_of(value)];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += static_cast<double>(value);
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

std::uint64_t LatencyHistogram::percentile(double percent) const noexcept {
  if (count_ == 0) return 0;
  double wanted = std::ceil(std::clamp(percent, 0.0, 100.0) / 100.0 * static_cast<double>(count_));
  std::uint64_t rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(bucket_top(i), max_);
  }
  return max_;
}

LatencySummary summarize(const LatencyHistogram& histogram) noexcept {
  LatencySummary summary;
  summary.count = histogram.count();
  summary.min_ns = histogram.min();
  summary.p50_ns = histogram.percentile(50);
  summary.p90_ns = histogram.percentile(90);
  summary.p99_ns = histogram.percentile(99);
  summary.p999_ns = histogram.percentile(99.9);
  summary.max_ns = histogram.max();
  summary.mean_ns = histogram.mean();
  for (std::size_t i = 0; i < kCdfPercents.size(); ++i)
    summary.cdf_ns[i] = i == 0 ? summary.min_ns : i + 1 == kCdfPercents.size() ? summary.max_ns : histogram.percentile(kCdfPercents[i]);
  return summary;
}

}  // namespace testio::stats
