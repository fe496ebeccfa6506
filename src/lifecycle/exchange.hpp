// What a test's two sides exchange, whatever protocol carries it: the request a server admits,
// each side's figures, and the errors a peer's conversation ends in. testio's wire
// (protocols/testio/protocol.hpp) and iperf3's (protocols/iperf3/results.hpp) map these to and
// from their messages; the lifecycles see only these.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/flow_path.hpp"
#include "spec/test_spec.hpp"
#include "stats/core_spread.hpp"
#include "stats/side_evidence.hpp"
#include "stats/summary.hpp"

namespace testio::lifecycle {

// A message that breaks the protocol or a cap. The text is one sentence fit to show the user.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The peer sent error{message}; the text is the peer's sentence.
class PeerError : public std::runtime_error {
 public:
  PeerError(std::string message, std::string code)
      : std::runtime_error(std::move(message)), code_(std::move(code)) {}
  const std::string& code() const noexcept { return code_; }

 private:
  std::string code_;
};

// The client's request: the test (its spec, in the spec's own JSON mapping at the top level of
// the frame) and what belongs to the handshake rather than the test.
struct TestRequest {
  spec::TestSpec spec;
  std::uint32_t client_threads = 1;  // what the client itself runs, for the server's report
  std::string client_version;
  std::string auth;                  // hex HMAC-SHA256 answer to the hello's nonce; empty without a key
  double max_wait_s = 0;             // --max-wait: how long it may wait in a busy server's queue
};

// What one side measured: sender_done (client) and results (server).
struct SideResults {
  std::vector<stats::StreamFigures> streams;
  std::vector<stats::IntervalRecord> intervals;  // may be empty (sender_done carries none)
  stats::CpuTimes cpu;                           // CPU this process used over the test
  double wall_s = 0;                             // the wall time that CPU was used in
  std::string congestion;                        // TCP_CONGESTION of the data connections
  std::uint32_t tests_beside = 0;                // server: most other tests running at once
  std::vector<std::string> digests;              // -F: hex digest per stream, in stream order
  std::vector<stats::CoreShare> cores;           // each CPU's busy and softirq share over the test
  std::string nics_reason;                       // --iface-stats: why these NICs were watched
  std::vector<net::FlowPath> paths;              // per stream, the interface it leaves this side by
  std::vector<int> incoming_cpus;                // per stream, SO_INCOMING_CPU at the end; -1 unknown
  std::vector<int> worker_cpus;                  // --rx-affinity follow: per stream, its worker's CPU; -1 none
  std::vector<int> mptcp_subflows;               // per stream, its MPTCP subflows at the end (0: plain TCP);
                                                 // empty when no stream is MPTCP
  stats::SideEvidence evidence;                  // for the verdict (diagnosis/); absent from older peers
};

// A bulk test's figures from one side, by direction: the forward streams (client to server) at
// the top level of the message, the reverse ones (server to client) under "reverse", absent in a
// forward-only test. A reverse-only test has an empty forward part.
struct DirectedResults {
  SideResults forward;
  std::optional<SideResults> reverse;
};

}  // namespace testio::lifecycle
