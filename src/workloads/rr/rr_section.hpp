// Request/response's part of a report: messages completed and their round-trip latency, in text,
// JSON (end.testio.rr), metrics, and a raw echo's own line.
#pragma once

#include <cstdint>
#include <memory>

#include "report/section.hpp"
#include "stats/histogram.hpp"

namespace testio::workloads::rr {

struct RrSummary {
  std::uint64_t message_size = 0;
  std::uint32_t depth = 1;
  std::uint64_t messages = 0;
  double seconds = 0;
  double messages_per_second = 0;
  stats::LatencySummary latency;
};

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t message_size, std::uint32_t depth,
                       double seconds);

class RrSection final : public report::Section {
 public:
  explicit RrSection(RrSummary summary) : summary_(summary) {}
  const RrSummary& summary() const noexcept { return summary_; }

  std::string key() const override { return "rr"; }
  // "rr: 100000 messages of 1 KiB, depth 1, in 10.00 s: 9876 messages/s; latency us p50 ... max ..."
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;
  // --rr --raw: one line of text or one JSON line, as a raw echo's figures.
  bool print_alone(std::ostream& out, const std::string& peer, config::OutputFormat format) const override;

 private:
  RrSummary summary_;
};

}  // namespace testio::workloads::rr
