// A reporter that prints nothing: for the direction of a two-way test whose intervals are kept
// for the end rather than shown as they happen.
#pragma once

#include "report/reporter.hpp"

namespace testio::report {

class NullReporter final : public Reporter {
 public:
  void start(const StartInfo&) override {}
  void interval(const stats::IntervalRecord&) override {}
  void end(const TestReport&) override {}
  void error(const std::string&) override {}
};

}  // namespace testio::report
