// A workload's own part of a report (request/response latencies, transfer tallies): what only it
// measured, told in each output. The workload makes it (workloads::TestSide::add_to_report) in its
// own folder; the reporters, the --prometheus file and the server's metrics ask it, never which
// workload made it. Immutable once made; read on the control thread.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.hpp"
#include "stats/histogram.hpp"

namespace testio::report {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Where a section writes its metrics (metrics/ gives one over its exposition writer). Names keep
// the project's rules: the testio_ prefix, base units, no _total on a gauge.
class MetricSink {
 public:
  virtual ~MetricSink() = default;
  // One gauge family: a sample per label set.
  virtual void gauge(const std::string& name, const std::string& help,
                     const std::vector<std::pair<MetricLabels, double>>& samples) = 0;
  // A latency distribution as a summary in seconds (p50, p90, p99, p99.9, sum and count); one
  // family may have several, each with its labels.
  virtual void latency(const std::string& name, const std::string& help, const stats::LatencySummary& latency,
                       const MetricLabels& labels = {}) = 0;
};

struct TestReport;

class Section {
 public:
  virtual ~Section() = default;
  // Its key under end.testio in JSON.
  virtual std::string key() const = 0;
  // Its lines below the figures in the text report, each ending in "\n"; `unit` is -f's.
  // `report` is the one that holds it (its direction's figures, which some sections sum up).
  virtual std::string text(const TestReport& report, char unit) const = 0;
  virtual nlohmann::ordered_json json(const TestReport& report) const = 0;
  virtual void metrics(MetricSink& sink) const = 0;
  // Its goodput stands for the test's (downloads: the slots' streams reconnect, so their figures
  // say little): the metrics of the streams' directions and CPU are left out.
  virtual bool has_own_goodput() const { return false; }
  // Its figures are the whole test's rather than its own workload's (latency under load: each phase
  // beside the load the other workloads ran then): the reporters ask it once, after every workload,
  // with the test's report (the first workload's, the others in `with`); JSON has it at end.<key>.
  virtual bool whole_test() const { return false; }
  // Why the test failed its purpose, in one sentence; empty when it did not.
  virtual std::string failure() const { return {}; }
  // A plain peer's test told in the section's own line (a raw echo's figures) instead of the
  // report; false when it has none.
  virtual bool print_alone(std::ostream&, const std::string& /*peer*/, config::OutputFormat) const { return false; }
};

}  // namespace testio::report
