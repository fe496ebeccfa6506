// A reporter turns a test's events into output: the text table, one JSON document, or JSON lines.
// Owner: the control thread; it is called for each event in order, never concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "config/config.hpp"
#include "report/prefixed_lines.hpp"
#include "report/test_report.hpp"

namespace testio::report {

using config::OutputFormat;

struct ReporterOptions {
  bool verbose = false;            // -v: per-connection lines whatever the count (else up to 4)
  char unit = 'a';                 // -f
  // A server's test: its number there, which each JSON event and document carries, and the
  // "[#7 192.0.2.5:41234] " every text line begins with. 0 and empty: a client's own report.
  std::uint64_t test = 0;
  std::string line_prefix;
  // iperf3's --title, --timestamps and --forceflush on every text line; --title and --extra-data
  // in the JSON document.
  LineStamps stamps;
  std::string title, extra_data;
  bool server_output = false;      // --get-server-output: the server's side after the client's
  bool stream_full_document = false;  // --json-stream-full-output: the whole document after the events
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void start(const StartInfo& start) = 0;
  // One interval of this side's own measurements, as it closes.
  virtual void interval(const stats::IntervalRecord& record) = 0;
  // A composed test: one interval of workload `workload` (2, 3, ...: its place in the test) as it
  // closes, `start` being that workload's start in the direction shown. The reports that print
  // each workload's intervals with its section at the end ignore it.
  virtual void with_interval(std::size_t /*workload*/, const StartInfo& /*start*/, const stats::IntervalRecord&) {}
  virtual void end(const TestReport& report) = 0;
  virtual void error(const std::string& message) = 0;
};

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::ostream& out, ReporterOptions options);

}  // namespace testio::report
