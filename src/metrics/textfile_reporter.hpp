// --prometheus FILE: the test's result for node_exporter's textfile collector. A decorator over
// the reporter the user asked for: it passes every event on, keeps the end's figures, and once
// the exit code is known writes them with testio_up to a temporary file beside FILE, renamed
// over it, so a scrape never sees half a file. Owner: the control thread (as any Reporter).
#pragma once

#include <memory>
#include <string>

#include "metrics/exposition.hpp"
#include "report/reporter.hpp"

namespace testio::metrics {

class TextfileReporter : public report::Reporter {
 public:
  TextfileReporter(report::Reporter& inner, std::string path) : inner_(inner), path_(std::move(path)) {}

  void start(const report::StartInfo& start) override { inner_.start(start); }
  void interval(const stats::IntervalRecord& record) override { inner_.interval(record); }
  void with_interval(std::size_t workload, const report::StartInfo& start, const stats::IntervalRecord& record) override {
    inner_.with_interval(workload, start, record);
  }
  void end(const report::TestReport& report) override;
  void error(const std::string& message) override;

  // Writes the file: testio_up is 1 when `exit_code` is 0. Returns false, having said why on
  // stderr, when it cannot be written.
  bool finish(int exit_code);

 private:
  report::Reporter& inner_;
  std::string path_;
  Exposition figures_;
  std::string failure_;  // the first error, or what the report shows went wrong
};

// Writes `text` to `path` through a temporary file in the same directory and a rename. Throws
// std::runtime_error naming the file and the reason.
void write_whole_file(const std::string& path, const std::string& text);

}  // namespace testio::metrics
