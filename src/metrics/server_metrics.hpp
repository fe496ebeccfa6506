// What `testio -s --metrics` serves at /metrics: the server's counters since it started (tests
// served, failed and refused by reason, connections, bytes), each running test's last interval
// and each peer's last test. Every test of either protocol reports through a ServedTestReport it
// makes, whose end() holds the bytes, so the data path does nothing for it (a test's bytes count
// when it ends; while a test runs, the server adds what its workers' counters say so far).
// Owner: the server's control thread; every member is touched only there.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "metrics/exposition.hpp"
#include "report/reporter.hpp"

namespace testio::metrics {

enum class Refusal { busy, auth, invalid, not_allowed, handshakes, version, unsupported, cap };
inline constexpr std::size_t kRefusals = 8;
enum class Protocol { testio, iperf3, raw };
inline constexpr std::size_t kProtocols = 3;

// What only the server knows when it is scraped.
struct ServerState {
  std::uint32_t tests_running = 0;
  std::uint32_t tests_waiting = 0;  // in the queue for a slot
  std::uint64_t busy_refusals = 0;  // counted by the slots both protocols share
  std::uint64_t live_received_bytes = 0, live_sent_bytes = 0;  // of tests not yet reported, either protocol
};

class ServerMetrics;

// One test's report on a server: its own reporter (the server's format; text lines begin with
// the test's number and peer, JSON events and documents carry the number), counted in the
// server's metrics as it goes. Owner: the server's control thread, like the metrics it feeds.
class ServedTestReport final : public report::Reporter {
 public:
  ServedTestReport(ServerMetrics& metrics, std::uint64_t number, std::string peer,
                   std::unique_ptr<report::Reporter> inner);
  ~ServedTestReport() override;
  ServedTestReport(const ServedTestReport&) = delete;
  ServedTestReport& operator=(const ServedTestReport&) = delete;

  // The test's number on this server: 1, 2, ... in the order their requests arrived.
  std::uint64_t number() const noexcept { return number_; }
  void start(const report::StartInfo& start) override { inner_->start(start); }
  void interval(const stats::IntervalRecord& record) override;
  void with_interval(std::size_t workload, const report::StartInfo& start, const stats::IntervalRecord& record) override {
    inner_->with_interval(workload, start, record);
  }
  void end(const report::TestReport& report) override;
  void error(const std::string& message) override { inner_->error(message); }

 private:
  ServerMetrics& metrics_;
  std::uint64_t number_;
  std::unique_ptr<report::Reporter> inner_;
};

// Makes a test's own reporter with `options` (the server's, with the test's number and prefix).
using ReportMaker = std::function<std::unique_ptr<report::Reporter>(const report::ReporterOptions& options)>;

class ServerMetrics {
 public:
  // Each test's reporter comes from `make`, given `options` (-v, -f) and the test's own.
  explicit ServerMetrics(ReportMaker make, report::ReporterOptions options = {});

  // A new test from `peer` ("192.0.2.5:41234"): its number, and the reporter it reports through.
  std::unique_ptr<ServedTestReport> test_report(const std::string& peer);

  // Tests that have begun (asked and got a number), of either protocol.
  std::uint64_t tests_begun() const noexcept { return last_number_; }
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
  friend class ServedTestReport;
  // A running test's last interval, for its series while it runs.
  struct LiveTest {
    std::string peer;  // the address, as the peer label
    double bytes_per_second = -1;  // -1: no interval yet
  };
  void end(const report::TestReport& report);
  void exposition_of_live_tests(Exposition& out) const;

  struct PeerResult {
    double forward_bytes_per_second = -1;  // -1: that direction did not run
    double reverse_bytes_per_second = -1;
    double ended_unix_s = 0;
  };
  void note_direction(const report::TestReport& report, PeerResult& result);

  ReportMaker make_;
  report::ReporterOptions options_;
  std::uint64_t last_number_ = 0;
  std::map<std::uint64_t, LiveTest> live_;  // by number, while each test runs
  double started_unix_s_;
  std::uint64_t connections_accepted_ = 0;
  std::uint64_t refused_[kRefusals] = {};
  std::uint64_t served_[kProtocols] = {}, failed_[kProtocols] = {};
  std::uint64_t received_bytes_ = 0, sent_bytes_ = 0;
  std::map<std::string, PeerResult> peers_;  // by peer address; the oldest go beyond kMaxPeers
};

// "192.0.2.7" from "192.0.2.7:41234", "2001:db8::7" from "[2001:db8::7]:41234".
std::string address_of(const std::string& endpoint);

}  // namespace testio::metrics
