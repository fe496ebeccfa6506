// `testio -c HOST --iperf3`: a test against a stock `iperf3 -s`, forward, reverse (-R) or both
// ways (--bidir), reported by testio's reporters from what both sides counted.
#pragma once

#include "config/config.hpp"
#include "report/reporter.hpp"

namespace testio::iperf3 {

// Runs one test; returns the exit code (0, or 1 when it failed). Reports errors itself.
int run_iperf3_client(const config::Config& config, report::Reporter& reporter);

}  // namespace testio::iperf3
