// The draft's measurement of one direction, without the network: each interval's goodput and the
// probes that completed in it; the moving averages of the last four intervals; stability (the last
// four moving averages within 5% of their mean, goodput and responsiveness both); and the result,
// RPM from the 95% trimmed means of the probes of the last four intervals. Owner: the one thread
// that runs the RPM loop, then (its result, a plain value) the control thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace testio::workloads::rpm {

struct ForeignProbe {  // a small GET on a new connection, each step timed apart (ms)
  double tcp_ms = 0, tls_ms = 0, http_ms = 0;
};

struct DirectionResult {
  std::string direction;          // download, upload
  double seconds = 0;
  std::uint32_t connections = 0;  // load connections at the end
  double goodput_bps = 0;         // the last moving average
  bool goodput_stable = false, rpm_stable = false;
  double rpm = 0;
  double spread_percent = 0;      // the last four moving averages of RPM: their standard deviation / mean
  double tcp_ms = 0, tls_ms = 0, http_foreign_ms = 0, http_self_ms = 0;  // trimmed means, last four intervals
  std::uint64_t foreign_probes = 0, self_probes = 0, failed_probes = 0;
  std::uint64_t bytes = 0;
  // high: both stable and the RPM within 5%; medium: within 10%; low otherwise.
  std::string confidence() const;
};

// The mean of the lowest 95% of `values` (the draft's trimmed mean); 0 for none.
double trimmed_mean(std::vector<double> values);

class RpmMeter {
 public:
  explicit RpmMeter(bool tls) : tls_(tls) {}
  void foreign(const ForeignProbe& probe) { pending_foreign_.push_back(probe); }
  void self(double http_ms) { pending_self_.push_back(http_ms); }
  void failed() { ++failed_; }
  // Closes an interval of `seconds` in which the load moved `bytes`; true once goodput and
  // responsiveness are both stable.
  bool close_interval(double seconds, std::uint64_t bytes);
  DirectionResult result(const std::string& direction, double seconds, std::uint32_t connections) const;
  bool goodput_stable() const noexcept { return stable(goodput_average_); }
  std::uint64_t bytes() const noexcept { return bytes_; }  // the load's, over the closed intervals

 private:
  static constexpr std::size_t kWindow = 4;  // the draft's MAD: intervals in a moving average
  static bool stable(const std::vector<double>& averages);
  double rpm_of_window(DirectionResult* detail) const;

  bool tls_;
  std::vector<double> goodput_;           // bits/s per interval
  std::vector<double> goodput_average_;   // moving averages
  std::vector<double> rpm_average_;       // RPM of each window's probes
  std::vector<std::vector<ForeignProbe>> foreign_;  // by interval
  std::vector<std::vector<double>> self_;           // by interval
  std::vector<ForeignProbe> pending_foreign_;
  std::vector<double> pending_self_;
  std::uint64_t failed_ = 0, bytes_ = 0, foreign_count_ = 0, self_count_ = 0;
};

}  // namespace testio::workloads::rpm
