// `testio exporter`: where it listens and what it lets a probe ask for. Filled by cli/, read by
// metrics/exporter.
#pragma once

#include <cstdint>
#include <string>

namespace testio::config {

struct ExporterConfig {
  std::string listen = "127.0.0.1:9201";  // --listen ADDRESS:PORT
  std::uint32_t max_probes = 1;           // --max-probes: probes at once (they share the host's links)
  double max_probe_time_s = 30;           // --max-probe-time: the longest time= a probe may ask for
  std::uint32_t max_connections = 128;    // --max-probe-connections: the most connections= a probe may ask for
  std::string binary;                     // the testio that runs each probe (this one)
  int verbosity = 0;
};

}  // namespace testio::config
