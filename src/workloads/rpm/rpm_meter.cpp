#include "workloads/rpm/rpm_meter.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace testio::workloads::rpm {
namespace {

constexpr double kStableSpread = 0.05;  // the draft's SDT: 5%

double mean(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double relative_spread(const std::vector<double>& values) {
  const double average = mean(values);
  if (values.size() < 2 || average <= 0) return 0;
  double squares = 0;
  for (double value : values) squares += (value - average) * (value - average);
  return std::sqrt(squares / static_cast<double>(values.size())) / average;
}

std::vector<double> last(const std::vector<double>& values, std::size_t count) {
  return {values.end() - static_cast<std::ptrdiff_t>(std::min(count, values.size())), values.end()};
}

}  // namespace

std::string DirectionResult::confidence() const {
  if (goodput_stable && rpm_stable && spread_percent <= 5) return "high";
  return spread_percent <= 10 && rpm > 0 ? "medium" : "low";
}

double trimmed_mean(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t kept = std::max<std::size_t>(1, values.size() - values.size() / 20);
  return std::accumulate(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(kept), 0.0) /
         static_cast<double>(kept);
}

bool RpmMeter::stable(const std::vector<double>& averages) {
  return averages.size() >= kWindow && relative_spread(last(averages, kWindow)) <= kStableSpread;
}

bool RpmMeter::close_interval(double seconds, std::uint64_t bytes) {
  bytes_ += bytes;
  goodput_.push_back(seconds > 0 ? static_cast<double>(bytes) * 8 / seconds : 0);
  foreign_.push_back(std::move(pending_foreign_));
  self_.push_back(std::move(pending_self_));
  foreign_count_ += foreign_.back().size();
  self_count_ += self_.back().size();
  pending_foreign_.clear();
  pending_self_.clear();
  if (goodput_.size() >= kWindow) goodput_average_.push_back(mean(last(goodput_, kWindow)));
  if (foreign_.size() >= kWindow) {
    const double rpm = rpm_of_window(nullptr);
    if (rpm > 0) rpm_average_.push_back(rpm);
  }
  return stable(goodput_average_) && stable(rpm_average_);
}

// RPM of the probes of the last kWindow intervals: 60,000 over the mean of the foreign probes'
// (TCP, TLS and HTTP, each trimmed) and the self probes' trimmed mean.
double RpmMeter::rpm_of_window(DirectionResult* detail) const {
  std::vector<double> tcp, tls, http, self;
  const std::size_t from = foreign_.size() - std::min(kWindow, foreign_.size());
  for (std::size_t i = from; i < foreign_.size(); ++i) {
    for (const ForeignProbe& probe : foreign_[i]) {
      tcp.push_back(probe.tcp_ms);
      tls.push_back(probe.tls_ms);
      http.push_back(probe.http_ms);
    }
    self.insert(self.end(), self_[i].begin(), self_[i].end());
  }
  if (tcp.empty() || self.empty()) return 0;
  const double tcp_ms = trimmed_mean(tcp), tls_ms = trimmed_mean(tls), http_ms = trimmed_mean(http);
  const double self_ms = trimmed_mean(self);
  // Without TLS (http://) the foreign probe has two steps, not three.
  const double foreign_ms = tls_ ? (tcp_ms + tls_ms + http_ms) / 3 : (tcp_ms + http_ms) / 2;
  const double round_trip_ms = (foreign_ms + self_ms) / 2;
  if (detail) {
    detail->tcp_ms = tcp_ms;
    detail->tls_ms = tls_ ? tls_ms : 0;
    detail->http_foreign_ms = http_ms;
    detail->http_self_ms = self_ms;
  }
  return round_trip_ms > 0 ? 60'000 / round_trip_ms : 0;
}

DirectionResult RpmMeter::result(const std::string& direction, double seconds, std::uint32_t connections) const {
  DirectionResult result;
  result.direction = direction;
  result.seconds = seconds;
  result.connections = connections;
  result.goodput_bps = goodput_average_.empty() ? mean(goodput_) : goodput_average_.back();
  result.goodput_stable = stable(goodput_average_);
  result.rpm_stable = stable(rpm_average_);
  result.rpm = rpm_of_window(&result);
  result.spread_percent = 100 * relative_spread(last(rpm_average_, kWindow));
  result.foreign_probes = foreign_count_;
  result.self_probes = self_count_;
  result.failed_probes = failed_;
  result.bytes = bytes_;
  return result;
}

}  // namespace testio::workloads::rpm
