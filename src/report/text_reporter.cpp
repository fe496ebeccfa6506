#include "report/text_reporter.hpp"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "report/diagnosis_report.hpp"
#include "report/host_report.hpp"
#include "report/path_report.hpp"
#include "report/server_output.hpp"
#include "report/digests_report.hpp"
#include "report/udp_report.hpp"
#include "report/format.hpp"
#include "util/units.hpp"

namespace testio::report {
namespace {

std::string cpu_line(const char* who, const SideReport& side, std::uint64_t bytes) {
  stats::CpuUsage usage = stats::cpu_usage(side.cpu, side.wall_s, bytes);
  return printf_text("cpu %-17s %6.1f%% of a core (user %.1f%%, system %.1f%%), %.3f CPU-seconds per GB\n",
                     who, usage.total_percent, usage.user_percent, usage.system_percent,
                     usage.seconds_per_gb);
}

// --send-mode zerocopy's share of sends, and --recv-mode splice/mmap's share of bytes received,
// each with why it is what it is where that is not obvious.
std::string zero_copy_text(const TestReport& report) {
  std::string text;
  if (stats::ZeroCopySummary sent = stats::zerocopy_summary(report.sender.totals); sent.completed)
    text += printf_text("zerocopy: %llu sends completed, %.1f%% without a copy%s\n",
                        static_cast<unsigned long long>(sent.completed), 100 * sent.zero_copy_share(),
                        sent.copied == sent.completed
                            ? " (the kernel copies data that stays on this host, as on loopback)"
                            : "");
  stats::ReceiveZeroCopySummary received = stats::receive_zerocopy_summary(report.receiver.totals);
  if (!received.total()) return text;
  const std::string total = util::format_bytes(received.total());
  if (report.start.spec.recv_mode == spec::RecvMode::splice)
    text += printf_text("splice: %.1f%% of %s received never copied to user memory%s\n",
                        100 * received.zero_copy_share(), total.c_str(),
                        received.zero_copy_bytes ? "" : " (splice was unavailable: recv_into read it)");
  else
    text += printf_text("mmap: %.1f%% of %s received mapped (TCP_ZEROCOPY_RECEIVE), the rest copied%s\n",
                        100 * received.zero_copy_share(), total.c_str(),
                        received.zero_copy_share() < 0.1
                            ? " (only whole pages of page-aligned payload map; on loopback nearly all is copied)"
                            : "");
  return text;
}

}  // namespace

// "tuning: congestion cubic, MSS 1000 (asked 1000), no delay, ..." for what -C/-M/-N/-A/--cport/-b/--fq-rate set.
std::string tuning_line(const StartInfo& start, char unit) {
  std::vector<std::string> parts;
  if (!start.bind_device.empty()) parts.push_back("interface " + start.bind_device);
  if (!start.spec.congestion.empty()) parts.push_back("congestion " + start.spec.congestion);
  if (start.mss_requested)
    parts.push_back("MSS " + std::to_string(start.mss) + " (asked " + std::to_string(start.mss_requested) + ")");
  if (start.no_delay) parts.push_back("no delay");
  if (!start.spec.cpus.empty()) parts.push_back("client CPUs " + util::format_cpu_list(start.spec.cpus));
  if (!start.server_cpus.empty()) parts.push_back("server CPUs " + util::format_cpu_list(start.server_cpus));
  if (start.cport_first)
    parts.push_back("source ports " + std::to_string(start.cport_first) + "-" + std::to_string(start.cport_last));
  if (!start.spread_asked.empty()) parts.push_back("spread even: " + spread_counts_text(start.spread_asked));
  if (start.spec.rate_bps > 0)
    parts.push_back("paced to " + util::format_rate(start.spec.rate_bps, unit) + " per connection");
  if (start.fq_rate_bps > 0) parts.push_back("kernel pacing " + util::format_rate(start.fq_rate_bps, unit));
  std::string line = "tuning:";
  for (std::size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : " ") + parts[i];
  return line + "\n";
}

namespace {

// What the test is: "5 s", "1.07 GB in total", "1000 transfers of 6 MiB ...", and how it runs.
std::string test_text(const StartInfo& start) {
  const spec::TestSpec& spec = start.spec;
  std::ostringstream out;
  if (!start.extent.empty())
    out << start.extent;
  else if (spec.total_bytes)
    out << util::format_bytes(spec.total_bytes) << " in total"
        << (start.hash().empty() ? "" : start.plain_peer() ? " (hashed)" : " (a file, hashed)");
  else if (spec.duration_s > 0 && (spec.begins_s > 0 || spec.ends_s > 0))
    out << "from " << spec.begins_s << " s to " << (spec.ends_s > 0 ? spec.ends_s : spec.window_s()) << " s of a "
        << spec.window_s() << " s test";
  else if (spec.duration_s > 0)
    out << spec.duration_s << " s";
  else
    out << "until the client stops";
  if (spec.omit_s > 0) out << " after " << spec.omit_s << " s omitted";
  // -R and --bidir send the other way; say which way this report looks.
  if (start.local_is_sender != start.from_client) out << ", the server sending";
  else if (start.bidir()) out << ", the client sending";
  if (start.bidir()) out << " (one way of --bidir)";
  if (!start.manner.empty()) {
    out << ", " << start.manner;
  } else {
    out << ", " << util::format_size(spec.buffer) << " per call";
    if (!start.plain_peer()) out << ", recv mode " << spec::to_string(spec.recv_mode);
    if (spec.send_mode != spec::SendMode::send) out << ", send mode " << spec::to_string(spec.send_mode);
    if (spec.engine != spec::Engine::asio) out << ", engine " << spec::to_string(spec.engine);
    if (!spec.marks_follow_rate) out << ", kernel's lowat marks";
  }
  if (spec.window)
    out << ", window " << util::format_size(spec.window) << " (granted: send " << util::format_size(start.sndbuf_actual)
        << ", receive " << util::format_size(start.rcvbuf_actual) << ")";
  return out.str();
}

}  // namespace

namespace {
std::ostream& prefixed_or(std::optional<PrefixedLines>& prefixed, std::ostream& out, const ReporterOptions& options) {
  if (options.line_prefix.empty() && !options.stamps.any()) return out;
  return prefixed.emplace(out, options.line_prefix, options.stamps).stream();
}
}  // namespace

TextReporter::TextReporter(std::ostream& out, ReporterOptions options)
    : out_(prefixed_or(prefixed_, out, options)), options_(std::move(options)) {}

void TextReporter::start(const StartInfo& start) {
  start_ = start;
  // Decided per test: a server's own configuration does not know how many connections come.
  per_stream_lines_ = options_.verbose || start.connections() <= 4;
  last_retransmits_.assign(start.connections(), 0);
  out_ << "testio " << TESTIO_VERSION << (start.from_client ? ": client to " : ": server for ") << start.peer
       << (start.peer_protocol.empty() ? "" : " (" + start.peer_protocol + ")") << ", " << start.connections()
       << (start.connections() == 1 ? " connection" : " connections") << ", threads " << start.client_threads;
  if (!start.plain_peer()) out_ << " client / " << start.server_threads << " server";
  out_ << ", " << test_text(start) << "\n";
  if (start.tuned()) out_ << tuning_line(start, options_.unit);
  if (start.spec.interval_s > 0)
    out_ << printf_text("[%5s] %-15s %12s %16s %10s %11s %6s %10s %9s\n", "ID", "interval", "bytes", "rate",
                        "calls", "bytes/call", "retr", "cwnd", "rtt");
  out_.flush();
}

namespace {

// A workload that runs for part of the window (begins_s, ends_s) moved nothing outside it: the text
// leaves those intervals out (JSON keeps the whole series).
bool outside_its_span(const spec::TestSpec& spec, const stats::IntervalRecord& record) {
  constexpr double kSameTime = 1e-6;
  return record.end_s <= spec.begins_s + kSameTime || (spec.ends_s > 0 && record.start_s >= spec.ends_s - kSameTime);
}

}  // namespace

void TextReporter::interval(const stats::IntervalRecord& record) {
  if (start_.spec.interval_s <= 0 || outside_its_span(start_.spec, record)) return;
  std::string span = printf_text("%.2f-%.2f s", record.start_s, record.end_s);
  const char* omitted = record.omitted ? "  (omitted)" : "";
  std::uint64_t calls = 0;
  std::uint32_t retransmits = 0;
  const bool udp = start_.datagrams;
  stats::DatagramTally datagrams;
  for (std::size_t i = 0; i < record.streams.size(); ++i) {
    const stats::StreamSample& sample = record.streams[i];
    calls += sample.calls;
    datagrams += sample.udp;
    datagrams.jitter_s += sample.udp.jitter_s / static_cast<double>(record.streams.size());  // the mean, as iperf3
    std::string tcp = "";
    if (sample.tcp.valid && start_.local_is_sender && i < last_retransmits_.size()) {
      std::uint32_t delta = sample.tcp.total_retrans - last_retransmits_[i];
      last_retransmits_[i] = sample.tcp.total_retrans;
      retransmits += delta;
      tcp = printf_text(" %6u %10s %6u us", delta, util::format_bytes(sample.tcp.snd_cwnd_bytes).c_str(),
                        sample.tcp.rtt_us);
    }
    if (per_stream_lines_)
      out_ << printf_text("[%5zu] %-15s %12s %16s %10llu %11.0f", i + 1, span.c_str(),
                          util::format_bytes(sample.bytes).c_str(),
                          util::format_rate(util::bits_per_second(sample.bytes, record.seconds()), options_.unit).c_str(),
                          static_cast<unsigned long long>(sample.calls),
                          sample.calls ? static_cast<double>(sample.bytes) / static_cast<double>(sample.calls) : 0.0)
           << (udp ? udp_interval_text(sample.udp, start_.local_is_sender) : tcp) << omitted << "\n";
  }
  if (!per_stream_lines_ || record.streams.size() > 1) {
    std::uint64_t bytes = record.bytes();
    out_ << printf_text("[%5s] %-15s %12s %16s %10llu %11.0f", "SUM", span.c_str(),
                        util::format_bytes(bytes).c_str(),
                        util::format_rate(util::bits_per_second(bytes, record.seconds()), options_.unit).c_str(),
                        static_cast<unsigned long long>(calls),
                        calls ? static_cast<double>(bytes) / static_cast<double>(calls) : 0.0);
    if (udp)
      out_ << udp_interval_text(datagrams, start_.local_is_sender);
    else if (start_.local_is_sender)
      out_ << printf_text(" %6u", retransmits);
    out_ << omitted << "\n";
  }
  out_ << nic_interval_text(record, options_.unit);
  out_.flush();
}

namespace {

std::string stream_row(const std::string& id, const char* role, const stats::StreamFigures& figures, char unit) {
  return printf_text("[%5s] %-8s %15llu %9.2f %16s %12llu %12.0f%s\n", id.c_str(), role,
                     static_cast<unsigned long long>(figures.bytes), figures.seconds(),
                     util::format_rate(util::bits_per_second(figures.bytes, figures.seconds()), unit).c_str(),
                     static_cast<unsigned long long>(figures.calls), figures.bytes_per_call(),
                     figures.failed ? "  FAILED" : "");
}

std::string sum_row(const char* role, const stats::SideSummary& sum, char unit) {
  return printf_text("[%5s] %-8s %15llu %9.2f %16s %12llu %12.0f   %s\n", "SUM", role,
                     static_cast<unsigned long long>(sum.bytes), sum.seconds,
                     util::format_rate(sum.bits_per_second, unit).c_str(), static_cast<unsigned long long>(sum.calls),
                     sum.calls ? static_cast<double>(sum.bytes) / static_cast<double>(sum.calls) : 0.0,
                     util::format_bytes(sum.bytes).c_str());
}

std::string balance_line(const char* role, const std::vector<stats::StreamFigures>& streams, char unit) {
  stats::Balance balance = stats::balance_of(stats::stream_rates(streams));
  return std::string("balance ") + role + ": min " + util::format_rate(balance.min, unit) + ", max " +
         util::format_rate(balance.max, unit) + ", stddev " + util::format_rate(balance.stddev, unit) +
         printf_text(", Jain's fairness index %.4f\n", balance.jain);
}

// The sender's TCP_INFO over the test: where rtt, cwnd and retransmits mean something.
std::string tcp_lines(const TestReport& report, bool per_stream) {
  if (!report.sender.present || report.sender.intervals.empty()) return {};
  std::string lines;
  std::uint32_t retransmits = 0, max_cwnd = 0, min_rtt = 0, max_rtt = 0;
  double rtt_sum = 0;
  std::size_t with_info = 0;
  for (std::size_t i = 0; i < report.start.connections(); ++i) {
    stats::TcpSummary tcp = stats::tcp_summary(report.sender.intervals, i);
    if (!tcp.valid) continue;
    if (per_stream)
      lines += printf_text("tcp [%3zu]: retransmits %u, rtt min/mean/max %u/%.0f/%u us, max cwnd %s\n", i + 1,
                           tcp.retransmits, tcp.min_rtt_us, tcp.mean_rtt_us, tcp.max_rtt_us,
                           util::format_bytes(tcp.max_snd_cwnd).c_str());
    retransmits += tcp.retransmits;
    max_cwnd = std::max(max_cwnd, tcp.max_snd_cwnd);
    min_rtt = with_info == 0 ? tcp.min_rtt_us : std::min(min_rtt, tcp.min_rtt_us);
    max_rtt = std::max(max_rtt, tcp.max_rtt_us);
    rtt_sum += tcp.mean_rtt_us;
    ++with_info;
  }
  if (with_info)
    lines += printf_text("tcp sender: retransmits %u, rtt min/mean/max %u/%.0f/%u us, max cwnd %s, congestion %s\n",
                         retransmits, min_rtt, rtt_sum / static_cast<double>(with_info), max_rtt,
                         util::format_bytes(max_cwnd).c_str(),
                         report.sender.congestion.empty() ? "?" : report.sender.congestion.c_str());
  return lines;
}

// What the workloads and the checks add below the figures.
std::string outcome_lines(const TestReport& report, char unit) {
  std::string lines;
  for (std::uint32_t stream : report.mismatched_streams)
    lines += "connection " + std::to_string(stream + 1) + ": sender and receiver byte counts differ\n";
  lines += zero_copy_text(report);
  for (const auto& section : report.sections)
    if (!section->whole_test()) lines += section->text(report, unit);
  if (!report.digests.hash.empty()) lines += digests_text(report.digests);
  if (report.tests_beside)
    lines += "the server ran up to " + std::to_string(report.tests_beside) + " other test" +
             (report.tests_beside > 1 ? "s" : "") + " beside this one\n";
  if (report.incomplete) lines += "INCOMPLETE: " + report.ended_because + "; the figures cover the time run\n";
  return lines;
}

}  // namespace

void TextReporter::end(const TestReport& report) {
  const char unit = options_.unit;
  std::vector<stats::StreamFigures> sent = summary_figures(report.sender);
  std::vector<stats::StreamFigures> received = summary_figures(report.receiver);
  out_ << "- - - - - - - - - - - - - - - - - - - - - - - - -\n";
  out_ << printf_text("[%5s] %-8s %15s %9s %16s %12s %12s\n", "ID", "role", "bytes", "seconds", "rate",
                      "calls", "bytes/call");
  if (per_stream_lines_) {
    for (std::size_t i = 0; i < report.start.connections(); ++i) {
      std::string id = std::to_string(i + 1);
      if (i < sent.size()) out_ << stream_row(id, "sender", sent[i], unit);
      if (i < received.size()) out_ << stream_row(id, "receiver", received[i], unit);
    }
  }
  stats::SideSummary sent_sum = stats::summarize(sent);
  if (!sent.empty()) out_ << sum_row("sender", sent_sum, unit);
  if (!received.empty()) out_ << sum_row("receiver", stats::summarize(received), unit);
  if (report.start.connections() > 1) {
    if (!sent.empty()) out_ << balance_line("sender  ", sent, unit);
    if (!received.empty()) out_ << balance_line("receiver", received, unit);
  }
  out_ << host_lines(report, sent_sum.bytes + report.other_bytes);
  out_ << tcp_lines(report, per_stream_lines_) << outcome_lines(report, unit);
  out_.flush();
  // --bidir: the reverse direction follows as a test of its own, its intervals replayed; so does
  // each other workload of a composed test.
  if (report.bidir_reverse) section("= = = = = = = = = = = = = = = = = = = = = = = = =\n", *report.bidir_reverse);
  for (std::size_t k = 0; k < report.with.size(); ++k)
    section("= = = = = = = = = = = = workload " + std::to_string(k + 2) + " of " +
                std::to_string(report.with.size() + 1) + ": " + report.with[k].start.spec.workload +
                " = = = = = = = = = = = =\n",
            report.with[k]);
  if (nested_) return;
  report.whole_test_sections([&](const Section& whole) { out_ << whole.text(report, unit); });
  out_ << diagnosis_text(report.diagnosis, report.variations);
  if (options_.server_output) out_ << "\nServer output:\n" << server_output_text(report, options_);
  out_.flush();
}

void TextReporter::section(const std::string& heading, const TestReport& report) {
  out_ << heading;
  start(report.start);
  // A workload whose figures are the whole test's (latency probes) tells them after every part.
  bool whole = false;
  for (const auto& each : report.sections) whole = whole || each->whole_test();
  if (whole) {
    out_ << "(its figures follow the last workload's)\n";
    return;
  }
  for (const stats::IntervalRecord& record : report.local().intervals) interval(record);
  const bool nested = nested_;
  nested_ = true;  // its whole-test sections are told once, after the test's
  end(report);
  nested_ = nested;
}

// Each side's CPU, and with -v its cores and the remote side's NIC intervals; the NIC totals.
// `moved`: the bytes the CPU served (--bidir: both directions, as each process ran both; a composed
// test: every workload).
std::string TextReporter::host_lines(const TestReport& report, std::uint64_t moved) const {
  const char* local_name = report.start.from_client ? "client" : "server";
  const char* remote_name = report.start.from_client ? "server" : "client";
  const std::string local_who = std::string("local (") + local_name + ")";
  const std::string remote_who = std::string("remote (") + remote_name + ")";
  std::string lines;
  if (report.other_bytes)
    lines += report.composed ? "cpu below: the whole test, per GB of every workload and direction\n"
                             : "cpu below: both directions, per GB moved both ways\n";
  if (report.local().present) lines += cpu_line(local_who.c_str(), report.local(), moved);
  if (report.remote().present) lines += cpu_line(remote_who.c_str(), report.remote(), moved);
  if (options_.verbose) {
    lines += cores_text(local_who, report.local());
    if (report.remote().present) lines += cores_text(remote_who, report.remote());
  }
  // --iface-stats: the remote side's intervals arrive only now; -v shows them one by one.
  const std::uint32_t flows = report.start.connections();
  if (report.remote().present && options_.verbose)
    for (const stats::IntervalRecord& record : report.remote().intervals)
      if (!record.nics.empty())
        lines += remote_who + printf_text(" %.2f-%.2f s:\n", record.start_s, record.end_s) +
                 nic_interval_text(record, options_.unit);
  if (report.local().present) lines += nic_summary_text(local_who, report.local(), flows, options_.unit);
  if (report.remote().present) lines += nic_summary_text(remote_who, report.remote(), flows, options_.unit);
  // Where the data leaves the sending host (its receiver's paths carry only ACKs).
  const bool local_sends = report.start.local_is_sender;
  lines += paths_text(local_sends ? local_who : remote_who, report.sender, options_.verbose);
  if (local_sends && report.start.from_client) lines += spread_text(local_who, report.start, report.sender);
  lines += mptcp_text(local_who, report.local());
  // Where the data's packets were processed on the receiving host.
  if (options_.verbose) lines += incoming_cpus_text(local_sends ? remote_who : local_who, report.receiver, true);
  return lines;
}

}  // namespace testio::report
