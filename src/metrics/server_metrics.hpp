// What `testio -s --metrics` serves at /metrics: the server's counters since it started (tests
// served, failed and refused by reason, connections, bytes) and each peer's last test. A
// decorator over the server's reporter: every test of either protocol ends in end(), whose report
// already holds the bytes, so the data path does nothing for it (a test's bytes count when it
// ends; while a test runs, the server adds what its workers' counters say so far). Owner: the server's control thread; every member is touched only there.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "metrics/exposition.hpp"
#include "report/reporter.hpp"

namespace testio::metrics {

enum class Refusal { busy, auth, invalid, not_allowed, handshakes, version, unsupported };
enum class Protocol { testio, iperf3, raw };
inline constexpr std::size_t kProtocols = 3;

// What only the server knows when it is scraped.
struct ServerState {
  std::uint32_t tests_running = 0;
  std::uint64_t busy_refusals = 0;  // counted by the slots both protocols share
  std::uint64_t live_received_bytes = 0, live_sent_bytes = 0;  // of tests not yet reported, either protocol
};

class ServerMetrics : public report::Reporter {
 public:
  explicit ServerMetrics(report::Reporter& inner);

  void start(const report::StartInfo& start) override { inner_.start(start); }
  void interval(const stats::IntervalRecord& record) override { inner_.interval(record); }
  void with_interval(std::size_t workload, const report::StartInfo& start, const stats::IntervalRecord& record) override {
    inner_.with_interval(workload, start, record);
  }
  void end(const report::TestReport& report) override;
  void error(const std::string& message) override { inner_.error(message); }

  void accepted() noexcept { ++connections_accepted_; }
  void refused(Refusal reason) noexcept { ++refused_[static_cast<std::size_t>(reason)]; }
  void served(Protocol protocol, bool succeeded) noexcept;
  // A test that ended without a report (the client went away): the bytes it had moved, so the
  // counters never go back.
  void count_unreported(std::uint64_t received, std::uint64_t sent) noexcept {
    received_bytes_ += received;
    sent_bytes_ += sent;
  }

  std::string exposition(const ServerState& state) const;

 private:
  struct PeerResult {
    double forward_bytes_per_second = -1;  // -1: that direction did not run
    double reverse_bytes_per_second = -1;
    double ended_unix_s = 0;
  };
  void note_direction(const report::TestReport& report, PeerResult& result);

  report::Reporter& inner_;
  double started_unix_s_;
  std::uint64_t connections_accepted_ = 0;
  std::uint64_t refused_[7] = {};
  std::uint64_t served_[kProtocols] = {}, failed_[kProtocols] = {};
  std::uint64_t received_bytes_ = 0, sent_bytes_ = 0;
  std::map<std::string, PeerResult> peers_;  // by peer address; the oldest go beyond kMaxPeers
};

// "192.0.2.7" from "192.0.2.7:41234", "2001:db8::7" from "[2001:db8::7]:41234".
std::string address_of(const std::string& endpoint);

}  // namespace testio::metrics
