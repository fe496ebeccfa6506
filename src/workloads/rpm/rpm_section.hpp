// The RPM test's part of a report: per direction the RPM, its confidence, the load it ran under and
// the probes' trimmed means, in text, JSON (end.testio.rpm) and metrics. Immutable once made; the
// control thread.
#pragma once

#include <string>
#include <vector>

#include "report/section.hpp"
#include "workloads/rpm/rpm_meter.hpp"

namespace testio::workloads::rpm {

class RpmSection final : public report::Section {
 public:
  RpmSection(std::vector<DirectionResult> results, std::string error)
      : results_(std::move(results)), error_(std::move(error)) {}
  std::string key() const override { return "rpm"; }
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;
  bool has_own_goodput() const override { return true; }
  std::string failure() const override;

 private:
  std::vector<DirectionResult> results_;
  std::string error_;  // the first probe or load transfer that failed, if any
};

}  // namespace testio::workloads::rpm
