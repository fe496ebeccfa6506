// /probe's parameters, checked and turned into the command line of the testio client that runs
// the probe. Every value is checked against a narrow pattern here, so nothing from the query
// reaches the child as an option of its own; the child checks the meaning again.
#pragma once

#include <string>
#include <vector>

#include "config/exporter_config.hpp"
#include "metrics/http_request.hpp"

namespace testio::metrics {

struct Probe {
  std::string problem;             // why the query cannot be probed ("" when it can)
  std::vector<std::string> args;   // after the binary's name, --prometheus FILE left for the caller
  double time_s = 0;               // the test's length
  double deadline_s = 0;           // when the child is killed, from its start
};

// The parameters a probe may carry, for the error that names an unknown one and for the docs.
inline constexpr const char* kProbeParameters =
    "target, connections, time, reverse, bidir, udp, bitrate, length, rr, iperf3";

// `scrape_timeout_s` (0: none said) bounds the deadline as Prometheus will stop waiting then.
Probe plan_probe(const HttpRequest& request, const config::ExporterConfig& config);

}  // namespace testio::metrics
