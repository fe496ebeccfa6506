// Where the workloads' report sections write their metrics (report::MetricSink): straight into an
// exposition, or, for a composed test, gathered from every workload and written family by family
// with a `workload` label (1 for the first, 2 for the next...), so two workloads of one kind give
// one family each. Owner: whoever builds the exposition; not shared.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "metrics/exposition.hpp"
#include "report/section.hpp"

namespace testio::metrics {

// A latency distribution as a summary in seconds: p50, p90, p99, p99.9, sum and count (none when
// it counted nothing).
void add_latency(Exposition& out, const std::string& name, const std::string& help,
                 const stats::LatencySummary& latency, const Labels& labels = {});

class ExpositionSink final : public report::MetricSink {
 public:
  explicit ExpositionSink(Exposition& out) : out_(out) {}
  void gauge(const std::string& name, const std::string& help,
             const std::vector<std::pair<report::MetricLabels, double>>& samples) override;
  void latency(const std::string& name, const std::string& help, const stats::LatencySummary& latency,
               const report::MetricLabels& labels = {}) override;

 private:
  Exposition& out_;
};

class WorkloadsSink final : public report::MetricSink {
 public:
  // The workload whose section writes next: its place in the test, from 1.
  void workload(std::size_t number) { label_ = std::to_string(number); }
  void gauge(const std::string& name, const std::string& help,
             const std::vector<std::pair<report::MetricLabels, double>>& samples) override;
  void latency(const std::string& name, const std::string& help, const stats::LatencySummary& latency,
               const report::MetricLabels& labels = {}) override;
  // Every family gathered, each once, in the order each first came.
  void write(Exposition& out) const;

 private:
  struct Entry {
    std::string name, help;
    bool latency = false;
    std::vector<std::pair<Labels, double>> samples;  // a gauge's
    stats::LatencySummary summary;                   // a latency's
    Labels labels;                                   // ... and its labels
  };
  std::vector<Entry> entries_;
  std::string label_ = "1";
};

}  // namespace testio::metrics
