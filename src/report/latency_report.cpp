#include "report/latency_report.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>


namespace testio::report {

std::string latency_text(const char* name, const stats::LatencySummary& latency, double scale, const char* unit) {
  char text[200];
  auto in_unit = [scale](double ns) { return ns / scale; };
  std::snprintf(text, sizeof text, "%s %s: min %.1f, p50 %.1f, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f, mean %.1f",
                name, unit, in_unit(static_cast<double>(latency.min_ns)), in_unit(static_cast<double>(latency.p50_ns)),
                in_unit(static_cast<double>(latency.p90_ns)), in_unit(static_cast<double>(latency.p99_ns)),
                in_unit(static_cast<double>(latency.p999_ns)), in_unit(static_cast<double>(latency.max_ns)),
                in_unit(latency.mean_ns));
  return text;
}

nlohmann::ordered_json latency_json(const stats::LatencySummary& latency, double scale) {
  auto in_unit = [scale](double ns) { return ns / scale; };
  std::array<double, stats::kCdfPercents.size()> cdf_ns{};
  std::copy(latency.cdf_ns.begin(), latency.cdf_ns.end(), cdf_ns.begin());
  return {{"min", in_unit(static_cast<double>(latency.min_ns))}, {"p50", in_unit(static_cast<double>(latency.p50_ns))},
          {"p90", in_unit(static_cast<double>(latency.p90_ns))}, {"p99", in_unit(static_cast<double>(latency.p99_ns))},
          {"p99_9", in_unit(static_cast<double>(latency.p999_ns))}, {"max", in_unit(static_cast<double>(latency.max_ns))},
          {"mean", in_unit(latency.mean_ns)}, {"cdf", cdf_json(cdf_ns, latency.count > 0, scale)}};
}

nlohmann::ordered_json cdf_json(const std::array<double, stats::kCdfPercents.size()>& values, bool any, double scale) {
  nlohmann::ordered_json cdf = nlohmann::ordered_json::array();
  if (any)
    for (std::size_t i = 0; i < values.size(); ++i) cdf.push_back({stats::kCdfPercents[i], values[i] / scale});
  return cdf;
}

}  // namespace testio::report
