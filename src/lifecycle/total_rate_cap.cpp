#include "lifecycle/total_rate_cap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "util/units.hpp"

namespace testio::lifecycle {

TotalRateCap::TotalRateCap(double cap_bps, double window_s, double step_s)
    : cap_bps_(cap_bps),
      step_s_(step_s),
      samples_per_window_(window_s > 0 ? std::max<std::size_t>(1, std::lround(window_s / step_s)) : 0),
      ring_(std::max<std::size_t>(1, samples_per_window_), 0) {}

double TotalRateCap::step_for(double window_s) noexcept { return window_s > 0 && window_s < 1 ? window_s : 1.0; }

std::string TotalRateCap::sample(std::uint64_t bytes) {
  ++taken_;
  std::uint64_t since = 0;  // the total at the window's start
  std::size_t steps = static_cast<std::size_t>(taken_);
  if (samples_per_window_) {
    // The ring holds the totals of the last samples_per_window_ samples (the start's are 0): the
    // oldest, at next_, is the total a window ago.
    since = ring_[next_];
    ring_[next_] = bytes;
    next_ = (next_ + 1) % ring_.size();
    if (taken_ < samples_per_window_) return {};
    steps = samples_per_window_;
  }
  const double seconds = static_cast<double>(steps) * step_s_;
  const double average_bps = static_cast<double>(bytes - since) * 8 / seconds;
  if (average_bps <= cap_bps_) return {};
  char span[32];
  std::snprintf(span, sizeof span, "%g s", seconds);
  return "the test moved " + util::format_rate(average_bps) + " on average over its last " + span +
         ", above the server's cap of " + util::format_rate(cap_bps_) + " (--server-bitrate-limit)";
}

}  // namespace testio::lifecycle
