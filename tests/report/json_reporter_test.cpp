#include "report/json_reporter.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "report/host_report.hpp"
#include "report/text_reporter.hpp"

namespace testio::report {
namespace {

ReporterOptions options(bool verbose, char unit) {
  ReporterOptions options;
  options.verbose = verbose;
  options.unit = unit;
  return options;
}


stats::IntervalRecord record(double start, double end, bool omitted, std::vector<std::uint64_t> bytes) {
  stats::IntervalRecord r;
  r.start_s = start;
  r.end_s = end;
  r.omitted = omitted;
  for (std::uint64_t b : bytes) r.streams.push_back({b, 1, {}});
  return r;
}

TestReport two_stream_report() {
  TestReport report;
  report.start.spec.connections = 2;
  report.start.spec.interval_s = 1;
  report.start.connecting_host = "localhost";
  report.sender.present = report.receiver.present = true;
  report.sender.totals = {{1500, 3, 0, 2, false}, {500, 1, 0, 2, false}};
  report.receiver.totals = {{1500, 5, 0.1, 2, false}, {500, 2, 0.1, 2, false}};
  report.sender.intervals = {record(0, 1, true, {1000, 0}), record(1, 2, false, {500, 500})};
  report.sender.cpu = {0.1, 0.3};
  report.sender.wall_s = 2;
  return report;
}

TEST(JsonEnd, SummaryLeavesOmittedBytesOut) {
  Json end = end_json(two_stream_report());
  EXPECT_EQ(end["sum_sent"]["bytes"], 1000u);
  EXPECT_EQ(end["streams"][0]["sender"]["bytes"], 500u);
  EXPECT_EQ(end["streams"][0]["receiver"]["bytes"], 1500u);  // the receiver logged no intervals
  EXPECT_EQ(end["testio"]["byte_counts_match"], true);
  EXPECT_DOUBLE_EQ(end["cpu_utilization_percent"]["host_total"].get<double>(), 20.0);
}

TEST(JsonEnd, MismatchesAreListed) {
  TestReport report = two_stream_report();
  report.mismatched_streams = {1};
  Json end = end_json(report);
  EXPECT_EQ(end["testio"]["byte_counts_match"], false);
  EXPECT_EQ(end["testio"]["mismatched_streams"][0], 1);
}

TEST(JsonInterval, StreamsAddUpAndRetransmitsAreDeltas) {
  stats::IntervalRecord r = record(0, 0.5, false, {300, 700});
  r.streams[0].tcp.valid = true;
  r.streams[0].tcp.total_retrans = 10;
  std::vector<std::uint32_t> last = {4, 0};
  Json interval = interval_json(r, /*sender=*/true, last);
  EXPECT_EQ(interval["sum"]["bytes"], 1000u);
  EXPECT_DOUBLE_EQ(interval["sum"]["bits_per_second"].get<double>(), 16000.0);
  EXPECT_EQ(interval["streams"][0]["retransmits"], 6u);
  EXPECT_EQ(interval["sum"]["retransmits"], 6u);
  EXPECT_EQ(last[0], 10u);
  EXPECT_FALSE(interval["streams"][1].contains("rtt"));  // no TCP_INFO for that stream
}

TEST(JsonReporter, DocumentHasIperf3TopLevelOrder) {
  std::ostringstream out;
  JsonReporter reporter(out, false);
  TestReport report = two_stream_report();
  reporter.start(report.start);
  for (const auto& r : report.sender.intervals) reporter.interval(r);
  reporter.end(report);
  Json document = Json::parse(out.str());
  std::vector<std::string> keys;
  for (auto& [key, value] : document.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"start", "intervals", "end"}));
  EXPECT_EQ(document["intervals"].size(), 2u);
  EXPECT_EQ(document["start"]["connecting_to"]["host"], "localhost");
}

TEST(JsonReporter, StreamEmitsOneLinePerEvent) {
  std::ostringstream out;
  JsonReporter reporter(out, true);
  TestReport report = two_stream_report();
  reporter.start(report.start);
  reporter.interval(report.sender.intervals[0]);
  reporter.end(report);
  reporter.error("gone");
  std::istringstream lines(out.str());
  std::vector<std::string> events;
  for (std::string line; std::getline(lines, line);) events.push_back(Json::parse(line)["event"]);
  EXPECT_EQ(events, (std::vector<std::string>{"start", "interval", "end", "error"}));
}

TEST(TextReporter, ShowsOmittedIntervalsAndForcedUnits) {
  std::ostringstream out;
  TextReporter reporter(out, options(true, 'm'));
  TestReport report = two_stream_report();
  reporter.start(report.start);
  reporter.interval(report.sender.intervals[0]);
  reporter.end(report);
  std::string text = out.str();
  EXPECT_NE(text.find("(omitted)"), std::string::npos) << text;
  EXPECT_NE(text.find("Mbit/s"), std::string::npos);
  EXPECT_EQ(text.find("Gbit/s"), std::string::npos);
  EXPECT_NE(text.find("Jain's fairness index"), std::string::npos);
}

TEST(TextReporter, ManyConnectionsGetSumsOnlyUnlessVerbose) {
  TestReport report = two_stream_report();
  report.start.spec.connections = 8;
  stats::IntervalRecord interval = record(0, 1, false, {1, 2, 3, 4, 5, 6, 7, 8});
  for (bool verbose : {false, true}) {
    std::ostringstream out;
    TextReporter reporter(out, options(verbose, 'a'));
    reporter.start(report.start);
    reporter.interval(interval);
    EXPECT_EQ(out.str().find("[    1] 0.00-1.00"), verbose ? out.str().find("[    1]") : std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("[  SUM] 0.00-1.00"), std::string::npos);
  }
}

stats::IntervalRecord nic_record(double start, double end, bool omitted, std::uint64_t tb1, std::uint64_t tb2) {
  stats::IntervalRecord r = record(start, end, omitted, {0});
  r.nics = {{"tb1", {tb1, 0, tb1 / 1000, 0}}, {"tb2", {tb2, 0, tb2 / 1000, 0}}};
  return r;
}

TEST(HostReport, NicTotalsLeaveOmittedIntervalsOut) {
  std::vector<NicTotal> totals = nic_totals({nic_record(0, 1, true, 999, 999), nic_record(1, 3, false, 3000, 1000)});
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].moved.rx_bytes, 3000u);
  EXPECT_EQ(totals[1].moved.rx_packets, 1u);
  EXPECT_DOUBLE_EQ(totals[0].seconds, 2.0);
}

TEST(HostReport, UnevenNicsWarnOnlyWithManyFlows) {
  std::vector<NicTotal> uneven = nic_totals({nic_record(0, 1, false, 3000, 1000)});
  NicBalance few = nic_balance(uneven, 7);
  EXPECT_TRUE(few.applies);
  EXPECT_FALSE(few.uneven);  // 7 flows over 2 NICs: too few for a hash to even out
  NicBalance many = nic_balance(uneven, 8);
  EXPECT_TRUE(many.uneven);
  EXPECT_DOUBLE_EQ(many.shares[0], 0.75);
  EXPECT_DOUBLE_EQ(many.jain, 0.8);
  EXPECT_FALSE(nic_balance(nic_totals({nic_record(0, 1, false, 1000, 600)}), 8).uneven);
  EXPECT_FALSE(nic_balance(nic_totals({record(0, 1, false, {1})}), 8).applies);
}

TEST(HostReport, TextAndJsonShowNicsAndCores) {
  TestReport report = two_stream_report();
  report.start.spec.connections = 8;
  report.sender.totals.resize(8);
  report.receiver.totals.resize(8);
  report.sender.intervals = {nic_record(0, 1, false, 0, 0)};
  report.sender.intervals[0].nics[0].moved.tx_bytes = 750'000'000;
  report.sender.intervals[0].nics[1].moved.tx_bytes = 250'000'000;
  report.sender.cores = {{0, 0.5, 0.1}, {1, 0.25, 0}};
  std::ostringstream text;
  TextReporter reporter(text, options(true, 'm'));
  reporter.start(report.start);
  reporter.interval(report.sender.intervals[0]);
  reporter.end(report);
  EXPECT_NE(text.str().find("[  NIC] tb1             rx 0.00 Mbit/s 0 packets, tx 6000.00 Mbit/s"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("nic balance local (client): tb1 75%, tb2 25%"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("WARNING: the NICs of local (client) carried 8 connections unevenly"), std::string::npos);
  EXPECT_NE(text.str().find("cores local (client): cpu0 50% busy (10% softirq), cpu1 25% busy (0% softirq)"),
            std::string::npos);

  Json end = end_json(report);
  EXPECT_EQ(end["testio"]["sender"]["nics"][1]["tx_bytes"], 250'000'000u);
  EXPECT_TRUE(end["testio"]["sender"]["nic_balance"]["uneven"].get<bool>());
  EXPECT_DOUBLE_EQ(end["testio"]["sender"]["cores"][0]["busy_percent"].get<double>(), 50.0);
  EXPECT_FALSE(end["testio"]["receiver"].contains("nics"));
  std::vector<std::uint32_t> retransmits;
  EXPECT_EQ(interval_json(report.sender.intervals[0], true, retransmits)["testio"]["nics"][0]["name"], "tb1");
}

TEST(ReceiveZeroCopy, ShareShowsOnTheReceiverInJsonAndText) {
  TestReport report = two_stream_report();
  report.start.spec.recv_mode = spec::RecvMode::mmap;
  report.receiver.totals[0].recv_zerocopy_bytes = 1000;
  report.receiver.totals[0].recv_copied_bytes = 500;
  report.receiver.totals[1].recv_copied_bytes = 500;
  Json end = end_json(report);
  EXPECT_FALSE(end["testio"]["sender"].contains("zerocopy_receive"));
  const Json& received = end["testio"]["receiver"]["zerocopy_receive"];
  EXPECT_EQ(received["zero_copy_bytes"], 1000u);
  EXPECT_EQ(received["copied_bytes"], 1000u);
  EXPECT_DOUBLE_EQ(received["zero_copy_share"].get<double>(), 0.5);

  std::ostringstream out;
  TextReporter reporter(out, options(false, 'a'));
  reporter.start(report.start);
  reporter.end(report);
  EXPECT_NE(out.str().find("mmap: 50.0% of "), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("on loopback"), std::string::npos) << out.str();  // only for a share near 0

  report.start.spec.recv_mode = spec::RecvMode::splice;
  report.receiver.totals[0].recv_zerocopy_bytes = 0;
  report.receiver.totals[0].recv_copied_bytes = 1500;
  std::ostringstream fell_back;
  TextReporter again(fell_back, options(false, 'a'));
  again.start(report.start);
  again.end(report);
  EXPECT_NE(fell_back.str().find("splice: 0.0% of "), std::string::npos) << fell_back.str();
  EXPECT_NE(fell_back.str().find("recv_into read it"), std::string::npos) << fell_back.str();
}

TEST(ServedTestReports, TextLinesCarryThePrefixAndJsonTheTestsNumber) {
  std::ostringstream out;
  ReporterOptions options;
  options.line_prefix = "[#7 192.0.2.5:41234] ";
  options.test = 7;
  TestReport report = two_stream_report();
  {
    TextReporter text(out, options);
    text.start(report.start);
    text.interval(report.sender.intervals[0]);
    text.end(report);
  }
  std::istringstream lines(out.str());
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    EXPECT_EQ(line.rfind("[#7 192.0.2.5:41234] ", 0), 0u) << line;
  EXPECT_GT(count, 1u);

  std::ostringstream events, document;
  JsonReporter stream(events, true, options);
  stream.start(report.start);
  EXPECT_EQ(Json::parse(events.str().substr(0, events.str().find('\n')))["test"], 7);
  JsonReporter whole(document, false, options);
  whole.error("the peer stopped for 10 s");
  EXPECT_EQ(Json::parse(document.str())["test"], 7);
}

// iperf3's --title, --timestamps and --forceflush stamp every text line (after a server's test
// prefix's place: the time first, as iperf3 prints it); --title and --extra-data sit at the top of
// the JSON document, where iperf3's consumers look.
TEST(IperfOptionsInReports, TitleAndTimeOnEveryLineAndLabelsInTheDocument) {
  std::ostringstream out;
  ReporterOptions options;
  options.stamps = {std::string("[stamp] "), "nightly", true};
  options.title = "nightly";
  options.extra_data = "run 7";
  TestReport report = two_stream_report();
  {
    TextReporter text(out, options);
    text.start(report.start);
    text.end(report);
  }
  std::istringstream lines(out.str());
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    EXPECT_EQ(line.rfind("[stamp] nightly:  ", 0), 0u) << line;
  EXPECT_GT(count, 1u);

  std::ostringstream document;
  JsonReporter whole(document, false, options);
  whole.start(report.start);
  whole.end(report);
  const Json parsed = Json::parse(document.str());
  EXPECT_EQ(parsed["title"], "nightly");
  EXPECT_EQ(parsed["extra_data"], "run 7");
}

}  // namespace
}  // namespace testio::report
