// --server-bitrate-limit RATE[/SECONDS]: a test's bytes, both ways and over all its streams,
// averaged over the last SECONDS (iperf3's default 5; 0: since the start) against RATE. iperf3
// checks the same at each of its stats intervals and ends the test with "total required
// bandwidth is larger than server limit"; testio's server samples once a second.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace testio::lifecycle {

// The test went above the cap: what() is the sentence for both sides.
struct TotalRateExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owner: the test's control thread (ServerTest::watch_total_rate samples it).
class TotalRateCap {
 public:
  // Samples taken every `step_s`; the average spans `window_s` (0: every sample since the start).
  TotalRateCap(double cap_bps, double window_s, double step_s);

  // The seconds between samples, for a window of `window_s`: one, or the window when shorter.
  static double step_for(double window_s) noexcept;

  // `bytes` moved by the test so far, a step after the previous sample. Once a full window
  // averages above the cap: the sentence that ends the test (else empty).
  std::string sample(std::uint64_t bytes);

 private:
  double cap_bps_;
  double step_s_;
  std::size_t samples_per_window_;  // 0: since the start
  std::vector<std::uint64_t> ring_;  // the last samples_per_window_ totals, the oldest at next_
  std::size_t next_ = 0;
  std::uint64_t taken_ = 0;
};

}  // namespace testio::lifecycle
