// Everything a reporter needs about one finished test, as plain values. Reporters never touch a
// socket; both sides fill this and hand it over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "stats/summary.hpp"

namespace testio::report {

struct TestReport {
  bool from_client = true;
  std::string peer;                 // "127.0.0.1:5201"
  std::uint32_t connections = 0;
  unsigned client_threads = 0;
  unsigned server_threads = 0;
  double duration_s = 0;            // requested window; 0 for a byte-count test
  std::uint64_t total_bytes = 0;    // requested -n; 0 for a timed test
  std::uint64_t buffer = 0;
  std::uint64_t window = 0;
  config::RecvMode recv_mode = config::RecvMode::recv_into;
  std::vector<stats::StreamFigures> sent;      // the client's figures, per stream
  std::vector<stats::StreamFigures> received;  // the server's figures, per stream
  bool per_stream_lines = false;
};

}  // namespace testio::report
