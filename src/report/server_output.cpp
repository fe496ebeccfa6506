#include "report/server_output.hpp"

#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "report/json_reporter.hpp"
#include "report/text_reporter.hpp"

namespace testio::report {
namespace {

void flip(StartInfo& start) {
  start.from_client = false;
  start.local_is_sender = !start.local_is_sender;
  for (StreamEndpoints& ends : start.connected) {
    std::swap(ends.local_host, ends.remote_host);
    std::swap(ends.local_port, ends.remote_port);
  }
  // The server knows its client by the address its connections came from.
  if (!start.connected.empty())
    start.peer = start.connected.front().remote_host + ":" + std::to_string(start.connected.front().remote_port);
}

// The server's report, event by event, through `reporter`.
void replay(Reporter& reporter, const TestReport& server) {
  reporter.start(server.start);
  for (const stats::IntervalRecord& record : server.local().intervals) reporter.interval(record);
  reporter.end(server);
}

}  // namespace

TestReport seen_by_server(const TestReport& report) {
  TestReport server = report;
  flip(server.start);
  if (report.bidir_reverse) server.bidir_reverse = std::make_shared<const TestReport>(seen_by_server(*report.bidir_reverse));
  for (TestReport& part : server.with) part = seen_by_server(part);
  return server;
}

Json server_output_json(const TestReport& report) {
  if (!report.server_output_json.empty()) return Json::parse(report.server_output_json);
  std::ostringstream out;
  JsonReporter reporter(out, false);
  replay(reporter, seen_by_server(report));
  return Json::parse(out.str());
}

std::string server_output_text(const TestReport& report, const ReporterOptions& options) {
  if (!report.server_output_text.empty()) return report.server_output_text;
  std::ostringstream out;
  ReporterOptions plain;
  plain.verbose = options.verbose;
  plain.unit = options.unit;
  {
    TextReporter reporter(out, plain);
    replay(reporter, seen_by_server(report));
  }
  return out.str();
}

}  // namespace testio::report
