// The RPM test's part of a report: per direction the RPM, its confidence, the load it ran under and
// the probes' trimmed means, in text, JSON (end.testio.rpm) and metrics.
#include "workloads/rpm/rpm.hpp"


#include <nlohmann/json.hpp>

#include "report/format.hpp"
#include "util/units.hpp"

namespace testio::workloads::rpm {
std::string RpmSection::text(const report::TestReport&, char unit) const {
  std::string lines;
  for (const DirectionResult& result : results_) {
    lines += report::printf_text("rpm %s: %.0f RPM, confidence %s (%s, RPM spread %.1f%%), %u load connections, %s over %.1f s\n",
                    result.direction.c_str(), result.rpm, result.confidence().c_str(),
                    result.goodput_stable && result.rpm_stable ? "stable" : "not stable", result.spread_percent,
                    result.connections, util::format_rate(result.goodput_bps, unit).c_str(), result.seconds);
    lines += report::printf_text("rpm %s probes: %llu on new connections (tcp %.3f ms, tls %.3f ms, http %.3f ms), %llu on the "
                    "load connections (http %.3f ms), %llu failed\n",
                    result.direction.c_str(), static_cast<unsigned long long>(result.foreign_probes), result.tcp_ms,
                    result.tls_ms, result.http_foreign_ms, static_cast<unsigned long long>(result.self_probes),
                    result.http_self_ms, static_cast<unsigned long long>(result.failed_probes));
  }
  if (!error_.empty()) lines += "rpm: " + error_ + "\n";
  return lines;
}

nlohmann::ordered_json RpmSection::json(const report::TestReport&) const {
  nlohmann::ordered_json directions = nlohmann::ordered_json::array();
  for (const DirectionResult& result : results_)
    directions.push_back({{"direction", result.direction},
                          {"rpm", result.rpm},
                          {"confidence", result.confidence()},
                          {"goodput_stable", result.goodput_stable},
                          {"rpm_stable", result.rpm_stable},
                          {"rpm_spread_percent", result.spread_percent},
                          {"load_connections", result.connections},
                          {"goodput_bps", result.goodput_bps},
                          {"bytes", result.bytes},
                          {"seconds", result.seconds},
                          {"foreign_probes", result.foreign_probes},
                          {"self_probes", result.self_probes},
                          {"failed_probes", result.failed_probes},
                          {"tcp_ms", result.tcp_ms},
                          {"tls_ms", result.tls_ms},
                          {"http_foreign_ms", result.http_foreign_ms},
                          {"http_self_ms", result.http_self_ms}});
  nlohmann::ordered_json rpm = {{"directions", std::move(directions)}};
  if (!error_.empty()) rpm["error"] = error_;
  return rpm;
}

void RpmSection::metrics(report::MetricSink& sink) const {
  std::vector<std::pair<report::MetricLabels, double>> rpm, goodput;
  for (const DirectionResult& result : results_) {
    const report::MetricLabels labels{{"direction", result.direction}, {"confidence", result.confidence()}};
    rpm.emplace_back(labels, result.rpm);
    goodput.emplace_back(labels, result.goodput_bps);
  }
  sink.gauge("testio_rpm", "Responsiveness under working conditions: round trips per minute (the IETF draft's)", rpm);
  sink.gauge("testio_rpm_goodput_bits_per_second", "The load's goodput while the RPM was measured", goodput);
}

std::string RpmSection::failure() const {
  for (const DirectionResult& result : results_)
    if (result.rpm > 0) return {};
  return "no RPM was measured: " + (error_.empty() ? std::string("no probe completed") : error_);
}

}  // namespace testio::workloads::rpm
