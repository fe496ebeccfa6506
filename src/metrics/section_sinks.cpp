#include "metrics/section_sinks.hpp"

#include <algorithm>

namespace testio::metrics {
namespace {

constexpr double kNanosecond = 1e-9;

}  // namespace

void add_latency(Exposition& out, const std::string& name, const std::string& help,
                 const stats::LatencySummary& latency, const Labels& labels) {
  if (!latency.count) return;
  out.summary(name, help,
              {{"0.5", latency.p50_ns * kNanosecond}, {"0.9", latency.p90_ns * kNanosecond},
               {"0.99", latency.p99_ns * kNanosecond}, {"0.999", latency.p999_ns * kNanosecond}},
              latency.mean_ns * kNanosecond * static_cast<double>(latency.count), static_cast<double>(latency.count),
              labels);
}

void ExpositionSink::gauge(const std::string& name, const std::string& help,
                           const std::vector<std::pair<report::MetricLabels, double>>& samples) {
  out_.family(name, MetricType::gauge, help);
  for (const auto& [labels, value] : samples) out_.sample(value, labels);
}

void ExpositionSink::latency(const std::string& name, const std::string& help, const stats::LatencySummary& latency,
                             const report::MetricLabels& labels) {
  add_latency(out_, name, help, latency, Labels(labels.begin(), labels.end()));
}

void WorkloadsSink::gauge(const std::string& name, const std::string& help,
                          const std::vector<std::pair<report::MetricLabels, double>>& samples) {
  Entry entry;
  entry.name = name;
  entry.help = help;
  for (const auto& [labels, value] : samples) {
    Labels with{{"workload", label_}};
    with.insert(with.end(), labels.begin(), labels.end());
    entry.samples.emplace_back(std::move(with), value);
  }
  entries_.push_back(std::move(entry));
}

void WorkloadsSink::latency(const std::string& name, const std::string& help, const stats::LatencySummary& latency,
                            const report::MetricLabels& labels) {
  Entry entry;
  entry.name = name;
  entry.help = help;
  entry.latency = true;
  entry.summary = latency;
  entry.labels = {{"workload", label_}};
  entry.labels.insert(entry.labels.end(), labels.begin(), labels.end());
  entries_.push_back(std::move(entry));
}

void WorkloadsSink::write(Exposition& out) const {
  std::vector<std::string> names;
  for (const Entry& entry : entries_)
    if (std::find(names.begin(), names.end(), entry.name) == names.end()) names.push_back(entry.name);
  for (const std::string& name : names)
    for (const Entry& entry : entries_) {
      if (entry.name != name) continue;
      if (entry.latency) {
        add_latency(out, entry.name, entry.help, entry.summary, entry.labels);
        continue;
      }
      out.family(entry.name, MetricType::gauge, entry.help);
      for (const auto& [labels, value] : entry.samples) out.sample(value, labels);
    }
}

}  // namespace testio::metrics
