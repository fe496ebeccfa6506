#include "metrics/test_metrics.hpp"

#include <vector>

#include "report/udp_report.hpp"
#include "stats/summary.hpp"

namespace testio::metrics {
namespace {

using report::TestReport;
using G = MetricType;

constexpr double kNanosecond = 1e-9;

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

// The families with a direction label, for each direction the test ran.
void add_directions(Exposition& out, const std::vector<const TestReport*>& reports) {
  auto each = [&](const char* name, const char* help, auto value) {
    out.family(name, G::gauge, help);
    for (const TestReport* report : reports) out.sample(value(*report), {{"direction", direction_of(*report)}});
  };
  each("testio_goodput_bytes_per_second", "Goodput the receiver counted over the test (omitted seconds left out)",
       [](const TestReport& r) { return goodput_bytes_per_second(r); });
  each("testio_test_received_bytes", "Bytes the receiver counted over the test (omitted seconds left out)",
       [](const TestReport& r) { return static_cast<double>(stats::summarize(delivered(r)).bytes); });
  each("testio_fairness_ratio", "Jain's fairness index of the connections' rates: 1 even, 1/N one carries all",
       [](const TestReport& r) { return stats::balance_of(stats::stream_rates(delivered(r))).jain; });
  if (!reports.front()->udp.present) {
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

void add_latency(Exposition& out, const char* name, const char* help, const stats::LatencySummary& latency) {
  if (!latency.count) return;
  out.summary(name, help,
              {{"0.5", latency.p50_ns * kNanosecond}, {"0.9", latency.p90_ns * kNanosecond},
               {"0.99", latency.p99_ns * kNanosecond}, {"0.999", latency.p999_ns * kNanosecond}},
              latency.mean_ns * kNanosecond * static_cast<double>(latency.count), static_cast<double>(latency.count));
}

void add_transfers(Exposition& out, const report::TransfersSummary& transfers) {
  out.family("testio_transfers", G::gauge, "Transfers that completed and that failed");
  out.sample(static_cast<double>(transfers.completed), {{"result", "completed"}});
  out.sample(static_cast<double>(transfers.failed), {{"result", "failed"}});
  out.single("testio_transfers_per_second", G::gauge, "Completed transfers per second", transfers.transfers_per_second);
  add_latency(out, "testio_transfer_duration_seconds", "Connect (or request) to last byte, per transfer",
              transfers.transfer);
  add_latency(out, "testio_transfer_connect_seconds", "The kernel's handshake round trip, per connection opened",
              transfers.connect);
  if (!transfers.http) return;
  add_latency(out, "testio_http_first_byte_seconds", "Request sent to the answer's first byte", transfers.first_byte);
  out.family("testio_http_responses", G::gauge, "Answers by HTTP status code");
  for (const auto& [code, count] : transfers.statuses)
    out.sample(static_cast<double>(count), {{"code", std::to_string(code)}});
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
  if (report.transfers.present) {
    // Downloads: the server sent, the client counted.
    out.single("testio_goodput_bytes_per_second", G::gauge, "Goodput the receiver counted over the test",
               report.transfers.bits_per_second / 8, {{"direction", "reverse"}});
    add_transfers(out, report.transfers);
    return;
  }
  std::vector<const TestReport*> reports{&report};
  if (report.bidir_reverse) reports.push_back(report.bidir_reverse.get());
  add_directions(out, reports);
  add_cpu(out, report);
  if (report.rr.present) {
    add_latency(out, "testio_rr_latency_seconds", "Round trip of one request and its response", report.rr.latency);
    out.single("testio_rr_transactions_per_second", G::gauge, "Requests answered per second",
               report.rr.messages_per_second);
  }
}

void add_up(Exposition& out, bool up, const std::string& reason) {
  out.family("testio_up", G::gauge, "1 when the test ran and succeeded; 0 with the reason when it did not");
  if (up) out.sample(1);
  else out.sample(0, {{"reason", reason.empty() ? std::string("failed") : reason}});
}

std::string failure_in(const TestReport& report) {
  if (!report.ended_because.empty()) return report.ended_because;
  if (report.transfers.failed)
    return std::to_string(report.transfers.failed) + " of " + std::to_string(report.transfers.requested) +
           " transfers failed" + (report.transfers.first_error.empty() ? "" : "; the first: " + report.transfers.first_error);
  if (!report.mismatched_streams.empty())
    return std::to_string(report.mismatched_streams.size()) + " streams' byte counts differ between the sides";
  if (!report.digests.hash.empty() && !report.digests.matches()) return "the digests differ";
  if (report.incomplete) return "the test ended early";
  return "";
}

}  // namespace testio::metrics
