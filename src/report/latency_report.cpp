#include "report/rr_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/units.hpp"

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
  return {{"min", in_unit(static_cast<double>(latency.min_ns))}, {"p50", in_unit(static_cast<double>(latency.p50_ns))},
          {"p90", in_unit(static_cast<double>(latency.p90_ns))}, {"p99", in_unit(static_cast<double>(latency.p99_ns))},
          {"p99_9", in_unit(static_cast<double>(latency.p999_ns))}, {"max", in_unit(static_cast<double>(latency.max_ns))},
          {"mean", in_unit(latency.mean_ns)}};
}

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t message_size, std::uint32_t depth,
                       double seconds) {
  RrSummary rr;
  rr.present = true;
  rr.message_size = message_size;
  rr.depth = depth;
  rr.messages = latencies.count();
  rr.seconds = seconds;
  rr.messages_per_second = seconds > 0 ? static_cast<double>(rr.messages) / seconds : 0;
  rr.latency = stats::summarize(latencies);
  return rr;
}

std::string rr_text(const RrSummary& rr) {
  char line[200];
  std::snprintf(line, sizeof line, "rr: %llu messages of %s, depth %u, in %.2f s: %.0f messages/s; ",
                static_cast<unsigned long long>(rr.messages), util::format_size(rr.message_size).c_str(), rr.depth,
                rr.seconds, rr.messages_per_second);
  return line + latency_text("latency", rr.latency, 1e3, "us") + "\n";
}

nlohmann::ordered_json rr_json(const RrSummary& rr) {
  return {{"msize", rr.message_size},
          {"depth", rr.depth},
          {"messages", rr.messages},
          {"seconds", rr.seconds},
          {"messages_per_second", rr.messages_per_second},
          {"latency_us", latency_json(rr.latency, 1e3)}};
}

void print_rr(std::ostream& out, const RrSummary& rr, const std::string& peer, config::OutputFormat format) {
  if (format == config::OutputFormat::text) {
    out << "raw echo server " << peer << "\n" << rr_text(rr);
  } else {
    nlohmann::ordered_json data = rr_json(rr);
    data["peer"] = peer;
    nlohmann::ordered_json line = {{"event", "rr"}, {"data", std::move(data)}};
    out << line.dump() << "\n";
  }
  out.flush();
}

}  // namespace testio::report
