#include "report/text_reporter.hpp"

#include <cstdio>
#include <string>

#include "util/units.hpp"

namespace testio::report {
namespace {

std::string row(const std::string& id, const char* role, const stats::StreamFigures& figures) {
  char line[200];
  std::snprintf(line, sizeof line, "[%5s] %-8s %15llu %9.2f %16s %12llu %12.0f%s\n", id.c_str(), role,
                static_cast<unsigned long long>(figures.bytes), figures.seconds(),
                util::format_rate(util::bits_per_second(figures.bytes, figures.seconds())).c_str(),
                static_cast<unsigned long long>(figures.calls), figures.bytes_per_call(),
                figures.failed ? "  FAILED" : "");
  return line;
}

std::string sum_row(const char* role, const stats::SideSummary& sum) {
  char line[200];
  std::snprintf(line, sizeof line, "[%5s] %-8s %15llu %9.2f %16s %12llu %12.0f   %s\n", "SUM", role,
                static_cast<unsigned long long>(sum.bytes), sum.seconds,
                util::format_rate(sum.bits_per_second).c_str(),
                static_cast<unsigned long long>(sum.calls),
                sum.calls ? static_cast<double>(sum.bytes) / static_cast<double>(sum.calls) : 0.0,
                util::format_bytes(sum.bytes).c_str());
  return line;
}

std::string spread_line(const char* role, const stats::SideSummary& sum) {
  return std::string("per connection (") + role + "): min " + util::format_rate(sum.min_stream_bps) +
         ", max " + util::format_rate(sum.max_stream_bps) + "\n";
}

}  // namespace

void print_text_report(std::ostream& out, const TestReport& report) {
  out << "testio " << TESTIO_VERSION << (report.from_client ? ": client to " : ": server for ")
      << report.peer << ", " << report.connections
      << (report.connections == 1 ? " connection" : " connections") << ", threads "
      << report.client_threads << " client / " << report.server_threads << " server, ";
  if (report.total_bytes)
    out << util::format_bytes(report.total_bytes) << " in total";
  else
    out << report.duration_s << " s";
  out << ", " << util::format_size(report.buffer) << " per call, recv mode "
      << config::to_string(report.recv_mode);
  if (report.window) out << ", window " << util::format_size(report.window);
  out << "\n";

  char header[200];
  std::snprintf(header, sizeof header, "[%5s] %-8s %15s %9s %16s %12s %12s\n", "ID", "role",
                "bytes", "seconds", "rate", "calls", "bytes/call");
  out << header;
  if (report.per_stream_lines) {
    for (std::size_t i = 0; i < report.connections; ++i) {
      std::string id = std::to_string(i + 1);
      if (i < report.sent.size()) out << row(id, "sender", report.sent[i]);
      if (i < report.received.size()) out << row(id, "receiver", report.received[i]);
    }
  }
  stats::SideSummary sent = stats::summarize(report.sent);
  stats::SideSummary received = stats::summarize(report.received);
  if (!report.sent.empty()) out << sum_row("sender", sent);
  if (!report.received.empty()) out << sum_row("receiver", received);
  if (report.connections > 1) {
    if (!report.sent.empty()) out << spread_line("sender", sent);
    if (!report.received.empty()) out << spread_line("receiver", received);
  }
  out.flush();
}

}  // namespace testio::report
