#include "report/json_reporter.hpp"

#include <sys/utsname.h>

#include <ctime>

#include <nlohmann/json.hpp>

#include "report/diagnosis_report.hpp"
#include "report/digests_report.hpp"
#include "report/host_report.hpp"
#include "report/path_report.hpp"
#include "report/server_output.hpp"
#include "report/text_reporter.hpp"
#include "report/udp_report.hpp"
#include "util/units.hpp"

namespace testio::report {
namespace {

using json = Json;

json figures_json(int socket, const stats::StreamFigures& figures, bool sender) {
  return {{"socket", socket},
          {"start", figures.start_s},
          {"end", figures.end_s},
          {"seconds", figures.seconds()},
          {"bytes", figures.bytes},
          {"bits_per_second", util::bits_per_second(figures.bytes, figures.seconds())},
          {"sender", sender}};
}

json testio_stream_extra(const stats::StreamFigures& figures) {
  json extra = {{"calls", figures.calls}, {"bytes_per_call", figures.bytes_per_call()}, {"failed", figures.failed}};
  if (figures.udp.any()) extra["udp"] = udp_stream_json(figures.udp);
  return extra;
}

json sum_json(const stats::SideSummary& sum, bool sender) {
  return {{"start", 0.0}, {"end", sum.seconds}, {"seconds", sum.seconds}, {"bytes", sum.bytes},
          {"bits_per_second", sum.bits_per_second}, {"sender", sender}};
}

json balance_json(const std::vector<stats::StreamFigures>& streams) {
  stats::Balance balance = stats::balance_of(stats::stream_rates(streams));
  return {{"min_bits_per_second", balance.min}, {"max_bits_per_second", balance.max},
          {"mean_bits_per_second", balance.mean}, {"stddev_bits_per_second", balance.stddev},
          {"jain_fairness_index", balance.jain}};
}

json side_extra(const SideReport& side, const std::vector<stats::StreamFigures>& figures,
                std::uint64_t bytes_moved) {
  stats::SideSummary sum = stats::summarize(figures);
  stats::CpuUsage cpu = stats::cpu_usage(side.cpu, side.wall_s, bytes_moved);
  stats::ZeroCopySummary zerocopy = stats::zerocopy_summary(figures);
  json extra = {{"calls", sum.calls},
          {"bytes_per_call", sum.calls ? static_cast<double>(sum.bytes) / static_cast<double>(sum.calls) : 0.0},
          {"failed_streams", sum.failed_streams},
          {"balance", balance_json(figures)},
          {"cpu", {{"user_seconds", side.cpu.user_s}, {"system_seconds", side.cpu.system_s},
                   {"wall_seconds", side.wall_s}, {"percent_of_core", cpu.total_percent},
                   {"cpu_seconds_per_gb", cpu.seconds_per_gb}}}};
  if (zerocopy.completed)
    extra["zerocopy"] = {{"completed_sends", zerocopy.completed}, {"copied_sends", zerocopy.copied},
                         {"zero_copy_share", zerocopy.zero_copy_share()}};
  if (stats::ReceiveZeroCopySummary received = stats::receive_zerocopy_summary(figures); received.total())
    extra["zerocopy_receive"] = {{"zero_copy_bytes", received.zero_copy_bytes},
                                 {"copied_bytes", received.copied_bytes},
                                 {"zero_copy_share", received.zero_copy_share()}};
  return extra;
}

// A report as a document of its own, shaped as the top level: its start, the reporting side's
// intervals and its end.
json section_json(const TestReport& report) {
  json intervals = json::array();
  std::vector<std::uint32_t> retransmit_state;
  if (report.start.spec.interval_s > 0)
    for (const stats::IntervalRecord& record : report.local().intervals)
      intervals.push_back(interval_json(record, report.start.local_is_sender, retransmit_state, report.start.datagrams));
  return {{"start", start_json(report.start)}, {"intervals", std::move(intervals)}, {"end", end_json(report)}};
}

// --bidir: iperf3's two reverse sums, and the whole reverse direction under testio.
void add_bidir_reverse(json& end, const TestReport& reverse) {
  json section = section_json(reverse);
  end["sum_sent_bidir_reverse"] = section["end"]["sum_sent"];
  end["sum_received_bidir_reverse"] = section["end"]["sum_received"];
  end["testio"]["bidir_reverse"] = std::move(section);
}

// testio's own part of the end: each side's figures beyond iperf3's, the checks, the workloads'
// parts and the other side's intervals.
json testio_end_json(const TestReport& report, const std::vector<stats::StreamFigures>& sent,
                     const std::vector<stats::StreamFigures>& received, std::uint64_t moved) {
  json extra = json::object();
  if (report.sender.present) {
    extra["sender"] = side_extra(report.sender, sent, moved);
    add_host_json(extra["sender"], report.sender, report.start.connections());
    if (!report.start.spread_asked.empty() && report.start.local_is_sender && report.start.from_client)
      extra["sender"]["spread"] = spread_json(report.start, report.sender);
  }
  if (report.receiver.present) {
    extra["receiver"] = side_extra(report.receiver, received, moved);
    add_host_json(extra["receiver"], report.receiver, report.start.connections());
  }
  extra["byte_counts_match"] = report.mismatched_streams.empty() && !report.incomplete;
  extra["incomplete"] = report.incomplete;
  if (!report.ended_because.empty()) extra["ended_because"] = report.ended_because;
  extra["tests_beside"] = report.tests_beside;
  for (const auto& section : report.sections)
    if (!section->whole_test()) extra[section->key()] = section->json(report);
  if (!report.digests.hash.empty()) extra["digests"] = digests_json(report.digests);
  extra["mismatched_streams"] = report.mismatched_streams;
  // The other side's intervals, as it measured them (the local side's are in "intervals").
  json remote_intervals = json::array();
  std::vector<std::uint32_t> retransmit_state;
  for (const stats::IntervalRecord& record : report.remote().intervals)
    remote_intervals.push_back(interval_json(record, !report.start.local_is_sender, retransmit_state, report.start.datagrams));
  extra["remote_intervals"] = std::move(remote_intervals);
  return extra;
}

}  // namespace

json interval_json(const stats::IntervalRecord& record, bool sender,
                   std::vector<std::uint32_t>& last_retransmits, bool udp) {
  json streams = json::array();
  std::uint64_t retransmits = 0;
  std::uint64_t calls = 0;
  stats::DatagramTally interval_udp;
  double jitter_sum_s = 0;
  if (last_retransmits.size() < record.streams.size()) last_retransmits.resize(record.streams.size(), 0);
  for (std::size_t i = 0; i < record.streams.size(); ++i) {
    const stats::StreamSample& sample = record.streams[i];
    calls += sample.calls;
    json stream = {{"socket", static_cast<int>(i + 1)},
                   {"start", record.start_s},
                   {"end", record.end_s},
                   {"seconds", record.seconds()},
                   {"bytes", sample.bytes},
                   {"bits_per_second", util::bits_per_second(sample.bytes, record.seconds())},
                   {"omitted", record.omitted},
                   {"sender", sender}};
    json extra = {{"calls", sample.calls},
                  {"bytes_per_call", sample.calls ? static_cast<double>(sample.bytes) / static_cast<double>(sample.calls) : 0.0}};
    if (sample.tcp.valid) {
      std::uint32_t delta = sample.tcp.total_retrans - last_retransmits[i];
      last_retransmits[i] = sample.tcp.total_retrans;
      if (sender) {
        stream["retransmits"] = delta;
        stream["snd_cwnd"] = sample.tcp.snd_cwnd_bytes;
        stream["rtt"] = sample.tcp.rtt_us;
        stream["rttvar"] = sample.tcp.rttvar_us;
        stream["pmtu"] = sample.tcp.pmtu;
        retransmits += delta;
      }
      extra["tcp_info"] = {{"rtt_us", sample.tcp.rtt_us}, {"rttvar_us", sample.tcp.rttvar_us},
                           {"snd_cwnd_bytes", sample.tcp.snd_cwnd_bytes},
                           {"total_retrans", sample.tcp.total_retrans}, {"pmtu", sample.tcp.pmtu},
                           {"delivery_rate_bps", sample.tcp.delivery_rate_bps}};
    }
    if (udp) add_udp_interval_json(stream, sample.udp, sender);
    stream["testio"] = std::move(extra);
    streams.push_back(std::move(stream));
    interval_udp += sample.udp;
    jitter_sum_s += sample.udp.jitter_s;
  }
  std::uint64_t bytes = record.bytes();
  json sum = {{"start", record.start_s}, {"end", record.end_s}, {"seconds", record.seconds()},
              {"bytes", bytes}, {"bits_per_second", util::bits_per_second(bytes, record.seconds())},
              {"omitted", record.omitted}, {"sender", sender},
              {"testio", {{"calls", calls}}}};
  if (sender && !udp) sum["retransmits"] = retransmits;
  if (udp) {
    interval_udp.jitter_s = record.streams.empty() ? 0 : jitter_sum_s / static_cast<double>(record.streams.size());
    add_udp_interval_json(sum, interval_udp, sender);
  }
  json entry = {{"streams", std::move(streams)}, {"sum", std::move(sum)}};
  if (!record.nics.empty()) entry["testio"] = {{"nics", nic_interval_json(record)}};
  for (const auto& [name, value] : record.figures) entry["testio"]["figures"][name] = value;
  return entry;
}

json end_json(const TestReport& report) {
  std::vector<stats::StreamFigures> sent = summary_figures(report.sender);
  std::vector<stats::StreamFigures> received = summary_figures(report.receiver);
  json streams = json::array();
  std::uint64_t retransmits = 0;
  for (std::size_t i = 0; i < report.start.connections(); ++i) {
    json entry = json::object();
    if (i < sent.size()) {
      json sender = figures_json(static_cast<int>(i + 1), sent[i], true);
      stats::TcpSummary tcp = stats::tcp_summary(report.sender.intervals, i);
      if (tcp.valid) {
        sender["retransmits"] = tcp.retransmits;
        sender["max_snd_cwnd"] = tcp.max_snd_cwnd;
        sender["max_rtt"] = tcp.max_rtt_us;
        sender["min_rtt"] = tcp.min_rtt_us;
        sender["mean_rtt"] = static_cast<std::uint64_t>(tcp.mean_rtt_us);
        retransmits += tcp.retransmits;
      } else if (i < report.sender.told_retransmits.size() && report.sender.told_retransmits[i] >= 0) {
        sender["retransmits"] = report.sender.told_retransmits[i];
        retransmits += static_cast<std::uint64_t>(report.sender.told_retransmits[i]);
      }
      sender["testio"] = testio_stream_extra(sent[i]);
      add_flow_json(sender["testio"], report.sender, i);
      entry["sender"] = std::move(sender);
    }
    if (i < received.size()) {
      json receiver = figures_json(static_cast<int>(i + 1), received[i], false);
      receiver["testio"] = testio_stream_extra(received[i]);
      add_flow_json(receiver["testio"], report.receiver, i);
      entry["receiver"] = std::move(receiver);
    }
    streams.push_back(std::move(entry));
  }
  stats::SideSummary sent_sum = stats::summarize(sent);
  stats::SideSummary received_sum = stats::summarize(received);
  json sum_sent = sum_json(sent_sum, true);
  sum_sent["retransmits"] = retransmits;
  json sum_received = sum_json(received_sum, false);
  // --bidir: each process's CPU served both directions, so it is spread over both's bytes.
  std::uint64_t moved = sent_sum.bytes + report.other_bytes;
  stats::CpuUsage local = stats::cpu_usage(report.local().cpu, report.local().wall_s, moved);
  stats::CpuUsage remote = stats::cpu_usage(report.remote().cpu, report.remote().wall_s, moved);

  json extra = testio_end_json(report, sent, received, moved);

  json end = {{"streams", std::move(streams)},
          {"sum_sent", std::move(sum_sent)},
          {"sum_received", std::move(sum_received)},
          {"cpu_utilization_percent",
           {{"host_total", local.total_percent}, {"host_user", local.user_percent},
            {"host_system", local.system_percent}, {"remote_total", remote.total_percent},
            {"remote_user", remote.user_percent}, {"remote_system", remote.system_percent}}},
          {"sender_tcp_congestion", report.sender.congestion},
          {"receiver_tcp_congestion", report.receiver.congestion},
          {"testio", std::move(extra)}};
  if (report.start.datagrams) add_udp_end_json(end, report);
  if (report.bidir_reverse) add_bidir_reverse(end, *report.bidir_reverse);
  // A composed test: each other workload's whole section, in order.
  for (const TestReport& part : report.with) end["testio"]["with"].push_back(section_json(part));
  return end;
}

JsonReporter::JsonReporter(std::ostream& out, bool stream_events, const ReporterOptions& options)
    : out_(out), stream_events_(stream_events), test_(options.test), title_(options.title),
      extra_data_(options.extra_data), server_output_(options.server_output),
      full_document_(stream_events && options.stream_full_document), document_(std::make_unique<Json>()) {}

JsonReporter::~JsonReporter() = default;

Json JsonReporter::new_document() const {
  Json document = test_ ? json{{"test", test_}} : json::object();
  document.update(json{{"start", json::object()}, {"intervals", json::array()}, {"end", json::object()}});
  if (!title_.empty()) document["title"] = title_;
  if (!extra_data_.empty()) document["extra_data"] = extra_data_;
  return document;
}

void JsonReporter::emit(const char* event, json data) {
  json line = json::object();
  line["event"] = event;
  if (test_) line["test"] = test_;
  line["data"] = std::move(data);
  out_ << line.dump() << "\n";
  out_.flush();
}

void JsonReporter::start(const StartInfo& start) {
  local_is_sender_ = start.local_is_sender;
  udp_ = start.datagrams;
  interval_s_ = start.spec.interval_s;
  last_retransmits_.assign(start.connections(), 0);
  with_retransmits_.clear();
  *document_ = new_document();
  (*document_)["start"] = start_json(start);
  if (stream_events_) emit("start", (*document_)["start"]);
}

void JsonReporter::interval(const stats::IntervalRecord& record) {
  if (interval_s_ <= 0) return;  // -i 0: no interval reports, as iperf3
  json entry = interval_json(record, local_is_sender_, last_retransmits_, udp_);
  if (!stream_events_) {
    (*document_)["intervals"].push_back(std::move(entry));
    return;
  }
  if (full_document_) (*document_)["intervals"].push_back(entry);  // a copy only when it goes both ways
  emit("interval", std::move(entry));
}

void JsonReporter::with_interval(std::size_t workload, const StartInfo& start, const stats::IntervalRecord& record) {
  if (!stream_events_ || interval_s_ <= 0) return;  // a document has them in end.testio.with
  std::vector<std::uint32_t>& retransmits = with_retransmits_[workload];
  emit("with_interval", {{"workload", workload},
                         {"interval", interval_json(record, start.local_is_sender, retransmits, start.datagrams)}});
}

void JsonReporter::end(const TestReport& report) {
  json end = end_json(report);
  report.whole_test_sections([&](const Section& section) { end[section.key()] = section.json(report); });
  if (!report.diagnosis.empty()) end["diagnosis"] = diagnosis_json(report.diagnosis);
  if (!report.variations.empty()) end["diagnose"] = variations_json(report.variations);
  // An iperf3 server without -J sends its text, which goes where iperf3's client puts it.
  const char* server_key = report.server_output_text.empty() ? "server_output_json" : "server_output_text";
  json server = !server_output_ ? json() : report.server_output_text.empty() ? server_output_json(report)
                                                                             : json(report.server_output_text);
  if (stream_events_) {
    if (!server.is_null()) emit(server_key, server);
    emit("end", full_document_ ? end : std::move(end));
    if (report.incomplete) emit("error", report.ended_because);
  }
  if (!stream_events_ || full_document_) {  // --json-stream-full-output: the document too, as iperf3 prints it
    (*document_)["end"] = std::move(end);
    if (report.incomplete) (*document_)["error"] = report.ended_because;
    if (!server.is_null()) (*document_)[server_key] = std::move(server);
    out_ << document_->dump(2) << "\n";
    out_.flush();
  }
  *document_ = json();
}

void JsonReporter::error(const std::string& message) {
  if (stream_events_) {
    emit("error", message);
    return;
  }
  if (document_->is_null()) *document_ = new_document();
  (*document_)["error"] = message;
  out_ << document_->dump(2) << "\n";
  out_.flush();
  *document_ = json();
}

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::ostream& out, ReporterOptions options) {
  switch (format) {
    case OutputFormat::json: return std::make_unique<JsonReporter>(out, false, options);
    case OutputFormat::json_stream: return std::make_unique<JsonReporter>(out, true, options);
    case OutputFormat::text: break;
  }
  return std::make_unique<TextReporter>(out, options);
}

// The report's start section as iperf3's -J shapes it (its connections, host, socket buffers and
// test_start), with testio's own part under start.testio: the whole spec and the settings
// dashboards read by name. Declared in json_reporter.hpp beside the interval and end pieces.
namespace {

std::string system_info() {
  utsname name{};
  if (uname(&name) != 0) return "";
  return std::string(name.sysname) + " " + name.nodename + " " + name.release + " " + name.version + " " +
         name.machine;
}

std::string http_date(std::int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

// testio's own part of the start: the whole spec in its one JSON mapping, and some of its fields
// again under the names dashboards have read since before the spec existed, taken from that
// mapping, so each field is turned into JSON in one place.
json testio_start_json(const StartInfo& start) {
  const json spec = spec::to_json(start.spec, spec::Form::report);
  json testio = {{"role", start.from_client ? "client" : "server"},
          {"client_threads", start.client_threads},
          {"server_threads", start.server_threads},
          {"plain_peer", start.plain_peer()},
          {"recv_mode", spec["recv_mode"]},
          {"send_mode", spec["send_mode"]},
          {"engine", spec["engine"]},
          {"workload", spec["workload"]},
          {"tuning",
           {{"congestion_requested", spec["congestion"]},
            {"mss_requested", start.mss_requested},
            {"no_delay", start.no_delay},
            {"rate_lowat", spec["rate_lowat"]},
            {"client_cpus", spec["cpus"]},
            {"server_cpus", start.server_cpus},
            {"cport_first", start.cport_first},
            {"cport_last", start.cport_last},
            {"spread_asked", spread_counts_json(start.spread_asked)},
            {"rate_bps", spec["rate_bps"]},
            {"fq_rate_bps", start.fq_rate_bps},
            {"bind_device", start.bind_device}}},
          {"interval", spec["interval_s"]},
          {"spec", spec}};
  if (!start.peer_version.empty()) testio["peer_version"] = start.peer_version;
  return testio;
}

}  // namespace

json start_json(const StartInfo& start) {
  const spec::TestSpec& spec = start.spec;
  json connected = json::array();
  for (std::size_t i = 0; i < start.connected.size(); ++i) {
    const StreamEndpoints& ends = start.connected[i];
    connected.push_back({{"socket", static_cast<int>(i + 1)}, {"local_host", ends.local_host},
                         {"local_port", ends.local_port}, {"remote_host", ends.remote_host},
                         {"remote_port", ends.remote_port}});
  }
  json result = {
      {"connected", std::move(connected)},
      {"version", std::string("testio ") + TESTIO_VERSION},
      {"system_info", system_info()},
      {"timestamp", {{"time", http_date(start.timestamp)}, {"timesecs", start.timestamp}}},
      {"cookie", ""},
      {"tcp_mss_default", start.mss},
      {"tcp_mss", start.mss_requested},
      {"sock_bufsize", spec.window},
      {"sndbuf_actual", start.sndbuf_actual},
      {"rcvbuf_actual", start.rcvbuf_actual},
      {"test_start",
       {{"protocol", "TCP"}, {"num_streams", start.connections()}, {"blksize", start.call_size ? start.call_size : spec.buffer},
        {"omit", spec.omit_s}, {"duration", spec.duration_s}, {"bytes", spec.total_bytes},
        {"blocks", 0}, {"reverse", start.local_is_sender != start.from_client ? 1 : 0}, {"tos", spec.tos},
        {"bidir", start.bidir() ? 1 : 0}}},
      {"testio", testio_start_json(start)}};
  if (start.from_client)
    result["connecting_to"] = {{"host", start.connecting_host}, {"port", start.connecting_port}};
  else
    result["accepted_connection"] = {{"host", start.peer}};
  return result;
}

}  // namespace testio::report
