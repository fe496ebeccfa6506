// The human table: a line per interval as it closes (per connection too with -v), then the
// sender and receiver sums, balance across connections, CPU and TCP_INFO.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/prefixed_lines.hpp"
#include "report/reporter.hpp"

namespace testio::report {

class TextReporter final : public Reporter {
 public:
  // Each line goes to `out` through options.line_prefix when it has one.
  TextReporter(std::ostream& out, ReporterOptions options);
  void start(const StartInfo& start) override;
  void interval(const stats::IntervalRecord& record) override;
  void end(const TestReport& report) override;
  void error(const std::string&) override {}  // already on stderr through the log

 private:
  // A report that follows the first as a test of its own (the reverse of --bidir, a composed test's
  // other workloads): `heading`, its start, its intervals replayed, its end.
  void section(const std::string& heading, const TestReport& report);
  std::string host_lines(const TestReport& report, std::uint64_t moved) const;

  std::optional<PrefixedLines> prefixed_;  // declared first: out_ may be its stream
  std::ostream& out_;
  ReporterOptions options_;
  StartInfo start_;
  bool per_stream_lines_ = false;
  bool nested_ = false;  // telling a part of the test (--bidir's reverse, a workload of `with`)
  std::vector<std::uint32_t> last_retransmits_;
};

}  // namespace testio::report
