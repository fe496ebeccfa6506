// The exposition writer, a test's metrics and the probe's plan: what Prometheus and the child
// client are handed.
#include <gtest/gtest.h>

#include "metrics/exposition.hpp"
#include "metrics/probe.hpp"
#include "metrics/server_metrics.hpp"
#include "metrics/test_metrics.hpp"

namespace testio::metrics {
namespace {

TEST(Exposition, WritesHelpTypeAndEscapedLabels) {
  Exposition out;
  out.single("testio_up", MetricType::gauge, "up\nor not", 0, {{"reason", "a \"quoted\" \\ line\nbreak"}});
  EXPECT_EQ(out.text(),
            "# HELP testio_up up\\nor not\n# TYPE testio_up gauge\n"
            "testio_up{reason=\"a \\\"quoted\\\" \\\\ line\\nbreak\"} 0\n");
}

TEST(Exposition, AFamilyCannotBeTakenUpAgain) {
  Exposition out;
  out.single("a", MetricType::gauge, "a", 1);
  out.single("b", MetricType::gauge, "b", 1);
  EXPECT_THROW(out.single("a", MetricType::gauge, "a", 2), std::logic_error);
}

TEST(Exposition, SummaryHasQuantilesSumAndCount) {
  Exposition out;
  out.summary("x_seconds", "x", {{"0.5", 0.25}}, 3, 4);
  EXPECT_NE(out.text().find("x_seconds{quantile=\"0.5\"} 0.25\n"), std::string::npos);
  EXPECT_NE(out.text().find("x_seconds_sum 3\nx_seconds_count 4\n"), std::string::npos);
}

TEST(Exposition, ValuesKeepTheirDigits) {
  EXPECT_EQ(format_value(1796155517.25), "1796155517.25");
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(0.0 / 0.0), "NaN");
}

report::TestReport two_way_report() {
  report::TestReport report;
  report.start.spec.connections = 2;
  report.start.from_client = true;
  report.start.local_is_sender = true;
  report.sender.present = report.receiver.present = true;
  report.sender.totals = report.receiver.totals = {{1000, 1, 0, 1}, {3000, 1, 0, 1}};
  report.sender.cpu = {0.5, 1.5};
  auto reverse = std::make_shared<report::TestReport>(report);
  reverse->start.local_is_sender = false;
  reverse->receiver.totals = {{500, 1, 0, 1}, {500, 1, 0, 1}};
  report.bidir_reverse = reverse;
  return report;
}

TEST(TestMetrics, OneSamplePerDirectionAndSide) {
  Exposition out;
  add_test_metrics(out, two_way_report());
  const std::string& text = out.text();
  EXPECT_NE(text.find("testio_goodput_bytes_per_second{direction=\"forward\",limit=\"unknown\"} 4000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_goodput_bytes_per_second{direction=\"reverse\",limit=\"unknown\"} 1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_test_received_bytes{direction=\"forward\"} 4000\n"), std::string::npos);
  EXPECT_NE(text.find("testio_fairness_ratio{direction=\"forward\"} 0.8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_cpu_seconds{side=\"client\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_cpu_seconds_per_byte{side=\"client\"} 5e-04\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("testio_up"), std::string::npos);
}

TEST(TestMetrics, FailureSaysWhy) {
  report::TestReport report;
  report.mismatched_streams = {0, 3};
  EXPECT_EQ(failure_in(report), "2 streams' byte counts differ between the sides");
  report.ended_because = "the server went away";
  EXPECT_EQ(failure_in(report), "the server went away");
  Exposition out;
  add_up(out, false, "the server went away");
  EXPECT_NE(out.text().find("testio_up{reason=\"the server went away\"} 0"), std::string::npos);
}

TEST(ServerMetrics, CountsBytesAndEachPeersLastTest) {
  struct Silent : report::Reporter {
    void start(const report::StartInfo&) override {}
    void interval(const stats::IntervalRecord&) override {}
    void end(const report::TestReport&) override {}
    void error(const std::string&) override {}
  };
  ServerMetrics metrics([](const report::ReporterOptions&) { return std::make_unique<Silent>(); });
  report::TestReport report = two_way_report();
  report.start.from_client = false;  // the server's view: it received the forward direction
  report.start.local_is_sender = false;
  std::const_pointer_cast<report::TestReport>(report.bidir_reverse)->start.from_client = false;
  std::const_pointer_cast<report::TestReport>(report.bidir_reverse)->start.local_is_sender = true;
  report.start.peer = "[2001:db8::7]:41234";
  std::unique_ptr<ServedTestReport> first = metrics.test_report(report.start.peer);
  std::unique_ptr<ServedTestReport> second = metrics.test_report("192.0.2.9:5000");
  EXPECT_EQ(first->number(), 1u);
  EXPECT_EQ(second->number(), 2u);
  stats::IntervalRecord interval;
  interval.end_s = 0.5;
  interval.streams.resize(1);
  interval.streams[0].bytes = 1000;
  second->interval(interval);
  EXPECT_NE(metrics.exposition({2, 0}).find("testio_test_interval_bytes_per_second{peer=\"192.0.2.9\",test=\"2\"} 2000\n"),
            std::string::npos)
      << metrics.exposition({2, 0});
  second.reset();  // a test that ended has no series
  EXPECT_EQ(metrics.exposition({1, 0}).find("test=\"2\""), std::string::npos);
  first->end(report);
  metrics.served(Protocol::testio, true);
  metrics.refused(Refusal::auth);
  const std::string text = metrics.exposition({1, 3, 2});
  EXPECT_NE(text.find("testio_received_bytes_total 4000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_sent_bytes_total 4000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("{peer=\"2001:db8::7\",direction=\"forward\"} 4000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("testio_tests_refused_total{reason=\"busy\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("testio_tests_refused_total{reason=\"auth\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("testio_tests_running 1\n"), std::string::npos);
  EXPECT_NE(text.find("testio_tests_waiting 3\n"), std::string::npos);
  EXPECT_EQ(address_of("192.0.2.7:5201"), "192.0.2.7");
}

HttpRequest query(std::vector<std::pair<std::string, std::string>> parameters, std::optional<double> timeout = {}) {
  HttpRequest request;
  request.path = "/probe";
  request.query = std::move(parameters);
  request.scrape_timeout_s = timeout;
  return request;
}

TEST(Probe, BecomesAClientCommandLine) {
  config::ExporterConfig config;
  Probe probe = plan_probe(query({{"target", "[::1]:5202"}, {"connections", "8"}, {"time", "3"}, {"reverse", "1"},
                                  {"udp", "1"}, {"bitrate", "100M"}}), config);
  ASSERT_EQ(probe.problem, "");
  EXPECT_EQ(probe.args, (std::vector<std::string>{"-c", "::1", "-p", "5202", "8", "-t", "3", "-R", "-u", "-b", "100M"}));
  EXPECT_EQ(probe.deadline_s, 13);
  probe = plan_probe(query({{"target", "server.example"}}, 10.0), config);
  EXPECT_EQ(probe.args, (std::vector<std::string>{"-c", "server.example", "-t", "5"}));
  EXPECT_EQ(probe.deadline_s, 9.5);
}

TEST(Probe, RefusesWhatCouldBecomeAnOptionOrBreakACap) {
  config::ExporterConfig config;
  for (auto parameters : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {}, {{"target", "-s"}}, {{"target", "a b"}}, {{"target", "h:99999"}}, {{"target", "h"}, {"time", "31"}},
           {{"target", "h"}, {"connections", "0"}}, {{"target", "h"}, {"connections", "129"}},
           {{"target", "h"}, {"bitrate", "--help"}}, {{"target", "h"}, {"udp", "yes"}}, {{"target", "h"}, {"port", "1"}},
           {{"target", "h"}, {"target", "i"}}}) {
    Probe probe = plan_probe(query(parameters), config);
    EXPECT_FALSE(probe.problem.empty()) << (parameters.empty() ? "" : parameters.back().second);
    EXPECT_TRUE(probe.args.empty());
  }
  Probe probe = plan_probe(query({{"target", "h"}, {"time", "10"}}, 10.0), config);
  EXPECT_NE(probe.problem.find("scrape timeout"), std::string::npos) << probe.problem;
}

}  // namespace
}  // namespace testio::metrics
