// One test's result as Prometheus metrics, for node_exporter's textfile collector (--prometheus)
// and the probe exporter: goodput, bytes and retransmits per direction, CPU per side, fairness,
// UDP loss and jitter, request/response and transfer quantiles. docs/metrics.md lists them.
#pragma once

#include <string>

#include "metrics/exposition.hpp"
#include "report/test_report.hpp"

namespace testio::metrics {

// "forward" (client to server) or "reverse": the direction `report` covers.
const char* direction_of(const report::TestReport& report);

// The receiver's count of the goodput in `report`'s direction, omitted seconds left out (the
// sender's where the peer counted nothing), in bytes per second.
double goodput_bytes_per_second(const report::TestReport& report);

// Every figure of `report` (and of its --bidir reverse), testio_up left out.
void add_test_metrics(Exposition& out, const report::TestReport& report);

// testio_up: 1, or 0 with the reason a test failed as its `reason` label.
void add_up(Exposition& out, bool up, const std::string& reason);

// Why a test whose client exits non-zero failed, from its report: "" when the report shows nothing.
std::string failure_in(const report::TestReport& report);

}  // namespace testio::metrics
