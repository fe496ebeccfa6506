// The UDP workload's own part of a report (end.testio.udp and the "udp:" lines): what the flows were
// asked to do and how this side ran them (fast paths the kernel refused, the host's UDP counters),
// and the loss summed up from the direction's flows, with where it happened. iperf3's -u keys and
// the interval columns come from the flows' figures (report/udp_report.*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/udp_counters.hpp"
#include "report/section.hpp"
#include "spec/test_spec.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::workloads::udp {

struct UdpSummary {
  std::uint64_t datagram = 0;              // -l
  double rate_bps = 0;                     // asked per flow; 0 = unpaced
  UdpSpec asked;                           // the fast paths asked for
  std::vector<std::string> fallbacks;      // this side's fast paths the kernel refused
  bool host_counted = false;               // this host's UDP counters could be read
  net::UdpCounters host;                   // ... and what they moved over the test
};

class UdpSection final : public report::Section {
 public:
  explicit UdpSection(UdpSummary summary) : summary_(std::move(summary)) {}
  std::string key() const override { return "udp"; }
  std::string text(const report::TestReport& report, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport& report) const override;
  // Its figures per direction (loss, jitter) are every datagram test's: metrics/test_metrics.cpp.
  void metrics(report::MetricSink&) const override {}

 private:
  UdpSummary summary_;
};

}  // namespace testio::workloads::udp
