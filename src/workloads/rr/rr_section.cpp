// Request/response's part of a report: messages completed and their round-trip latency, in text,
// JSON (end.testio.rr), metrics, and a raw echo's own line.
#include "workloads/rr/rr.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "report/latency_report.hpp"
#include "util/units.hpp"

namespace testio::workloads::rr {

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t message_size, std::uint32_t depth,
                       double seconds) {
  RrSummary rr;
  rr.message_size = message_size;
  rr.depth = depth;
  rr.messages = latencies.count();
  rr.seconds = seconds;
  rr.messages_per_second = seconds > 0 ? static_cast<double>(rr.messages) / seconds : 0;
  rr.latency = stats::summarize(latencies);
  return rr;
}

namespace {

// "rr: 100000 messages of 1 KiB, depth 1, in 10.00 s: 9876 messages/s; latency us p50 ... max ..."
std::string rr_line(const RrSummary& rr) {
  char line[200];
  std::snprintf(line, sizeof line, "rr: %llu messages of %s, depth %u, in %.2f s: %.0f messages/s; ",
                static_cast<unsigned long long>(rr.messages), util::format_size(rr.message_size).c_str(), rr.depth,
                rr.seconds, rr.messages_per_second);
  return line + report::latency_text("latency", rr.latency, 1e3, "us") + "\n";
}

nlohmann::ordered_json rr_json(const RrSummary& rr) {
  return {{"msize", rr.message_size},
          {"depth", rr.depth},
          {"messages", rr.messages},
          {"seconds", rr.seconds},
          {"messages_per_second", rr.messages_per_second},
          {"latency_us", report::latency_json(rr.latency, 1e3)}};
}

}  // namespace

std::string RrSection::text(const report::TestReport&, char) const { return rr_line(summary_); }

nlohmann::ordered_json RrSection::json(const report::TestReport&) const { return rr_json(summary_); }

void RrSection::metrics(report::MetricSink& sink) const {
  sink.latency("testio_rr_latency_seconds", "Round trip of one request and its response", summary_.latency);
  sink.gauge("testio_rr_transactions_per_second", "Requests answered per second", {{{}, summary_.messages_per_second}});
}

bool RrSection::print_alone(std::ostream& out, const std::string& peer, config::OutputFormat format) const {
  if (format == config::OutputFormat::text) {
    out << "raw echo server " << peer << "\n" << rr_line(summary_);
  } else {
    nlohmann::ordered_json data = rr_json(summary_);
    data["peer"] = peer;
    nlohmann::ordered_json line = {{"event", "rr"}, {"data", std::move(data)}};
    out << line.dump() << "\n";
  }
  out.flush();
  return true;
}

}  // namespace testio::workloads::rr
