// testio's report of an iperf3 test, one per direction: this side's own figures beside the
// peer's, as its results message gave them.
#pragma once

#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/results.hpp"
#include "report/test_report.hpp"

namespace testio::iperf3 {

// `start` lists every connection of the test; the report keeps those of `local`'s direction.
report::TestReport direction_report(report::StartInfo start, const DirectionResults& local, bool local_sends,
                                    const Results& peer);

}  // namespace testio::iperf3
