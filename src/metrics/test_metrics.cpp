#include "metrics/test_metrics.hpp"

#include <algorithm>
#include <vector>

#include "metrics/section_sinks.hpp"
#include "report/udp_report.hpp"
#include "stats/summary.hpp"

namespace testio::metrics {
namespace {

using report::TestReport;
using G = MetricType;

// Received figures where the receiver counted (the sender's where the peer sent none).
std::vector<stats::StreamFigures> delivered(const TestReport& report) {
  return report.receiver.present ? report::summary_figures(report.receiver) : report::summary_figures(report.sender);
}

std::uint32_t retransmits(const TestReport& report) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < report.start.connections(); ++i) {
    stats::TcpSummary tcp = stats::tcp_summary(report.sender.intervals, i);
    if (tcp.valid) sum += tcp.retransmits;
  }
  return sum;
}

// The verdict's limit for `direction` ("unknown" when there is none, as in a report from before).
std::string limit_of(const std::vector<report::Verdict>& verdicts, const char* direction) {
  for (const report::Verdict& verdict : verdicts)
    if (verdict.direction == direction) return verdict.limit;
  return "unknown";
}

// The result's gauge carries what limited it, so a dashboard can group runs by their limit.
void add_goodput(Exposition& out, const std::vector<const TestReport*>& reports,
                 const std::vector<report::Verdict>& verdicts) {
  out.family("testio_goodput_bytes_per_second", G::gauge,
             "Goodput the receiver counted over the test (omitted seconds left out), labelled with what limited it");
  for (const TestReport* report : reports)
    out.sample(goodput_bytes_per_second(*report),
               {{"direction", direction_of(*report)}, {"limit", limit_of(verdicts, direction_of(*report))}});
  if (verdicts.empty()) return;
  out.family("testio_diagnosis_confidence", G::gauge, "How sure the verdict on what limited a direction is (0 to 1)");
  for (const report::Verdict& verdict : verdicts)
    out.sample(verdict.confidence, {{"direction", verdict.direction}, {"limit", verdict.limit}});
}

// The families with a direction label, for each direction the test ran.
void add_directions(Exposition& out, const std::vector<const TestReport*>& reports) {
  auto each = [&](const char* name, const char* help, auto value) {
    out.family(name, G::gauge, help);
    for (const TestReport* report : reports) out.sample(value(*report), {{"direction", direction_of(*report)}});
  };
  add_goodput(out, reports, reports.front()->diagnosis);
  each("testio_test_received_bytes", "Bytes the receiver counted over the test (omitted seconds left out)",
       [](const TestReport& r) { return static_cast<double>(stats::summarize(delivered(r)).bytes); });
  each("testio_fairness_ratio", "Jain's fairness index of the connections' rates: 1 even, 1/N one carries all",
       [](const TestReport& r) { return stats::balance_of(stats::stream_rates(delivered(r))).jain; });
  if (!reports.front()->start.datagrams) {
    each("testio_tcp_retransmits", "Segments the sending side's TCP retransmitted (TCP_INFO total_retrans)",
         [](const TestReport& r) { return static_cast<double>(retransmits(r)); });
    return;
  }
  auto loss = [](const TestReport& r) {
    return report::sum_of(report::flow_losses(report::summary_figures(r.sender), report::summary_figures(r.receiver)));
  };
  each("testio_udp_datagrams", "Distinct datagrams the receiver counted",
       [&](const TestReport& r) { return static_cast<double>(loss(r).received); });
  each("testio_udp_lost_datagrams", "Datagrams sent and never received",
       [&](const TestReport& r) { return static_cast<double>(loss(r).lost); });
  each("testio_udp_loss_ratio", "Lost datagrams over those sent (0 to 1)",
       [&](const TestReport& r) { return loss(r).lost_percent() / 100; });
  each("testio_udp_jitter_seconds", "Mean over the flows of RFC 3550 interarrival jitter",
       [&](const TestReport& r) { return loss(r).jitter_ms / 1000; });
}

void add_cpu(Exposition& out, const TestReport& report) {
  const std::uint64_t moved = stats::summarize(report::summary_figures(report.sender)).bytes +
                              report.other_bytes;
  const bool local_is_client = report.start.from_client;
  struct Side { const report::SideReport& figures; const char* name; };
  const Side sides[] = {{report.local(), local_is_client ? "client" : "server"},
                        {report.remote(), local_is_client ? "server" : "client"}};
  out.family("testio_cpu_seconds", G::gauge, "User and system CPU time a side's process used over the test");
  for (const Side& side : sides)
    if (side.figures.present) out.sample(side.figures.cpu.user_s + side.figures.cpu.system_s, {{"side", side.name}});
  out.family("testio_cpu_seconds_per_byte", G::gauge, "A side's CPU time over the bytes the test moved (x 1e9: per GB)");
  for (const Side& side : sides)
    if (side.figures.present && moved)
      out.sample((side.figures.cpu.user_s + side.figures.cpu.system_s) / static_cast<double>(moved), {{"side", side.name}});
}

}  // namespace

double goodput_bytes_per_second(const TestReport& report) {
  return stats::summarize(delivered(report)).bits_per_second / 8;
}

const char* direction_of(const TestReport& report) {
  return report.start.from_client == report.start.local_is_sender ? "forward" : "reverse";
}

void add_test_metrics(Exposition& out, const TestReport& report) {
  out.single("testio_test_timestamp_seconds", G::gauge, "When the test started (Unix time)",
             static_cast<double>(report.start.timestamp));
  out.single("testio_test_duration_seconds", G::gauge, "The test's length on this side's clock", report.local().wall_s);
  out.single("testio_test_connections", G::gauge, "Data connections (or UDP flows) per direction",
             static_cast<double>(report.start.connections()));
  bool own_goodput = false;  // downloads: the streams' figures say little, the section says it all
  for (const auto& section : report.sections) own_goodput = own_goodput || section->has_own_goodput();
  if (!own_goodput) {
    std::vector<const TestReport*> reports{&report};
    if (report.bidir_reverse) reports.push_back(report.bidir_reverse.get());
    add_directions(out, reports);
    add_cpu(out, report);
  }
  if (report.with.empty()) {
    ExpositionSink sink(out);
    for (const auto& section : report.sections) section->metrics(sink);
    return;
  }
  // A composed test: every workload's section, each sample labelled with its workload's place.
  WorkloadsSink sink;
  for (std::size_t k = 0; k <= report.with.size(); ++k) {
    sink.workload(k + 1);
    for (const auto& section : (k == 0 ? report : report.with[k - 1]).sections) section->metrics(sink);
  }
  sink.write(out);
}

void add_up(Exposition& out, bool up, const std::string& reason) {
  out.family("testio_up", G::gauge, "1 when the test ran and succeeded; 0 with the reason when it did not");
  if (up) out.sample(1);
  else out.sample(0, {{"reason", reason.empty() ? std::string("failed") : reason}});
}

std::string failure_in(const TestReport& report) {
  if (!report.ended_because.empty()) return report.ended_because;
  for (const auto& section : report.sections)
    if (std::string failure = section->failure(); !failure.empty()) return failure;
  if (!report.mismatched_streams.empty())
    return std::to_string(report.mismatched_streams.size()) + " streams' byte counts differ between the sides";
  if (!report.digests.hash.empty() && !report.digests.matches()) return "the digests differ";
  if (report.incomplete) return "the test ended early";
  return "";
}

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
