#include "report/rr_report.hpp"

#include <cstdio>

#include "util/units.hpp"

namespace testio::report {

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t msize, std::uint32_t depth,
                       double seconds) {
  RrSummary rr;
  rr.present = true;
  rr.msize = msize;
  rr.depth = depth;
  rr.messages = latencies.count();
  rr.seconds = seconds;
  rr.messages_per_second = seconds > 0 ? static_cast<double>(rr.messages) / seconds : 0;
  rr.min_ns = latencies.min();
  rr.p50_ns = latencies.percentile(50);
  rr.p90_ns = latencies.percentile(90);
  rr.p99_ns = latencies.percentile(99);
  rr.p999_ns = latencies.percentile(99.9);
  rr.max_ns = latencies.max();
  rr.mean_ns = latencies.mean();
  return rr;
}

std::string rr_text(const RrSummary& rr) {
  char line[400];
  auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  std::snprintf(line, sizeof line,
                "rr: %llu messages of %s, depth %u, in %.2f s: %.0f messages/s; latency us: min %.1f, p50 %.1f, "
                "p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f, mean %.1f\n",
                static_cast<unsigned long long>(rr.messages), util::format_size(rr.msize).c_str(), rr.depth,
                rr.seconds, rr.messages_per_second, us(rr.min_ns), us(rr.p50_ns), us(rr.p90_ns), us(rr.p99_ns),
                us(rr.p999_ns), us(rr.max_ns), rr.mean_ns / 1e3);
  return line;
}

nlohmann::ordered_json rr_json(const RrSummary& rr) {
  return {{"msize", rr.msize},
          {"depth", rr.depth},
          {"messages", rr.messages},
          {"seconds", rr.seconds},
          {"messages_per_second", rr.messages_per_second},
          {"latency_us",
           {{"min", rr.min_ns / 1e3}, {"p50", rr.p50_ns / 1e3}, {"p90", rr.p90_ns / 1e3}, {"p99", rr.p99_ns / 1e3},
            {"p99_9", rr.p999_ns / 1e3}, {"max", rr.max_ns / 1e3}, {"mean", rr.mean_ns / 1e3}}}};
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
