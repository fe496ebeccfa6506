#include "metrics/server_metrics.hpp"

#include <chrono>

#include "metrics/test_metrics.hpp"
#include "stats/summary.hpp"

namespace testio::metrics {
namespace {

using G = MetricType;

// A label per peer: a fleet's worth, without letting a scan of addresses grow the page forever.
constexpr std::size_t kMaxPeers = 1024;
// Running tests with a series of their own, the newest: --max-tests may be 1024, and a scrape
// that grew with it would cost the database more than the figures are worth. /metrics counts
// them all in testio_tests_running.
constexpr std::size_t kMaxLiveSeries = 64;

const char* const kRefusalNames[kRefusals] = {"busy",       "auth",    "invalid",     "not_allowed",
                                              "handshakes", "version", "unsupported", "cap"};
const char* const kProtocolNames[] = {"testio", "iperf3", "raw"};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::uint64_t local_bytes(const report::TestReport& report) {
  std::uint64_t bytes = 0;
  for (const stats::StreamFigures& figures : report.local().totals) bytes += figures.bytes;
  return bytes;
}

}  // namespace

std::string address_of(const std::string& endpoint) {
  if (!endpoint.empty() && endpoint.front() == '[') {
    const std::size_t close = endpoint.find(']');
    return close == std::string::npos ? endpoint : endpoint.substr(1, close - 1);
  }
  const std::size_t colon = endpoint.find(':');
  return colon != std::string::npos && colon == endpoint.rfind(':') ? endpoint.substr(0, colon) : endpoint;
}

ServedTestReport::ServedTestReport(ServerMetrics& metrics, std::uint64_t number, std::string peer,
                                   std::unique_ptr<report::Reporter> inner)
    : metrics_(metrics), number_(number), inner_(std::move(inner)) {
  metrics_.live_[number_].peer = address_of(peer);
}

ServedTestReport::~ServedTestReport() { metrics_.live_.erase(number_); }

void ServedTestReport::interval(const stats::IntervalRecord& record) {
  inner_->interval(record);
  if (record.seconds() > 0)
    metrics_.live_[number_].bytes_per_second = static_cast<double>(record.bytes()) / record.seconds();
}

void ServedTestReport::end(const report::TestReport& report) {
  inner_->end(report);
  metrics_.end(report);
}

ServerMetrics::ServerMetrics(ReportMaker make, report::ReporterOptions options)
    : make_(std::move(make)), options_(std::move(options)), started_unix_s_(unix_now()) {}

std::unique_ptr<ServedTestReport> ServerMetrics::test_report(const std::string& peer) {
  report::ReporterOptions options = options_;
  options.test = ++last_number_;
  options.line_prefix = "[#" + std::to_string(options.test) + " " + peer + "] ";
  std::unique_ptr<report::Reporter> inner = make_(options);
  return std::make_unique<ServedTestReport>(*this, options.test, peer, std::move(inner));
}

void ServerMetrics::served(Protocol protocol, bool succeeded) noexcept {
  ++served_[static_cast<std::size_t>(protocol)];
  if (!succeeded) ++failed_[static_cast<std::size_t>(protocol)];
}

void ServerMetrics::note_direction(const report::TestReport& report, PeerResult& result) {
  (report.start.local_is_sender ? sent_bytes_ : received_bytes_) += local_bytes(report);
  const double goodput = goodput_bytes_per_second(report);
  (std::string(direction_of(report)) == "forward" ? result.forward_bytes_per_second
                                                  : result.reverse_bytes_per_second) = goodput;
}

void ServerMetrics::end(const report::TestReport& report) {
  const std::string peer = address_of(report.start.peer);
  if (!peers_.count(peer) && peers_.size() >= kMaxPeers) {
    auto oldest = peers_.begin();
    for (auto it = peers_.begin(); it != peers_.end(); ++it)
      if (it->second.ended_unix_s < oldest->second.ended_unix_s) oldest = it;
    peers_.erase(oldest);
  }
  PeerResult result;
  note_direction(report, result);
  if (report.bidir_reverse) note_direction(*report.bidir_reverse, result);
  // A composed test's other workloads count in the bytes; the goodput is its first workload's.
  for (const report::TestReport& part : report.with)
    for (const report::TestReport* direction : {&part, part.bidir_reverse.get()})
      if (direction) (direction->start.local_is_sender ? sent_bytes_ : received_bytes_) += local_bytes(*direction);
  result.ended_unix_s = unix_now();
  peers_[peer] = result;
}

std::string ServerMetrics::exposition(const ServerState& state) const {
  Exposition out;
  out.single("testio_build_info", G::gauge, "Always 1; the version is its label", 1, {{"version", TESTIO_VERSION}});
  out.single("testio_server_start_time_seconds", G::gauge, "When the server started (Unix time)", started_unix_s_);
  out.single("testio_connections_accepted_total", G::counter, "TCP connections accepted on the test port",
             static_cast<double>(connections_accepted_));
  out.family("testio_tests_served_total", G::counter, "Tests that got under way, by the protocol the client spoke");
  for (std::size_t i = 0; i < kProtocols; ++i) out.sample(static_cast<double>(served_[i]), {{"protocol", kProtocolNames[i]}});
  out.family("testio_tests_failed_total", G::counter, "Tests that got under way and did not succeed");
  for (std::size_t i = 0; i < kProtocols; ++i) out.sample(static_cast<double>(failed_[i]), {{"protocol", kProtocolNames[i]}});
  out.family("testio_tests_refused_total", G::counter, "Connections or tests refused before a test began, by reason");
  for (std::size_t i = 0; i < kRefusals; ++i) {
    const std::uint64_t count = refused_[i] + (i == static_cast<std::size_t>(Refusal::busy) ? state.busy_refusals : 0);
    out.sample(static_cast<double>(count), {{"reason", kRefusalNames[i]}});
  }
  out.single("testio_tests_running", G::gauge, "Tests running or being set up", state.tests_running);
  out.single("testio_tests_waiting", G::gauge, "Tests waiting in the queue for a slot (--queue)", state.tests_waiting);
  out.single("testio_received_bytes_total", G::counter, "Bytes received by tests (omitted seconds included)",
             static_cast<double>(received_bytes_ + state.live_received_bytes));
  out.single("testio_sent_bytes_total", G::counter, "Bytes sent by tests (omitted seconds included)",
             static_cast<double>(sent_bytes_ + state.live_sent_bytes));
  exposition_of_live_tests(out);
  out.family("testio_last_test_goodput_bytes_per_second", G::gauge, "Goodput of each peer's last test, per direction");
  for (const auto& [peer, result] : peers_) {
    if (result.forward_bytes_per_second >= 0)
      out.sample(result.forward_bytes_per_second, {{"peer", peer}, {"direction", "forward"}});
    if (result.reverse_bytes_per_second >= 0)
      out.sample(result.reverse_bytes_per_second, {{"peer", peer}, {"direction", "reverse"}});
  }
  out.family("testio_last_test_timestamp_seconds", G::gauge, "When each peer's last test ended (Unix time)");
  for (const auto& [peer, result] : peers_) out.sample(result.ended_unix_s, {{"peer", peer}});
  return out.text();
}

void ServerMetrics::exposition_of_live_tests(Exposition& out) const {
  out.family("testio_test_interval_bytes_per_second", G::gauge,
             "Each running test's last interval as this server counted it (received, or sent by a reverse test), "
             "by its number here and its peer; the newest 64 tests");
  std::size_t shown = 0;
  for (auto it = live_.rbegin(); it != live_.rend() && shown < kMaxLiveSeries; ++it) {
    if (it->second.bytes_per_second < 0) continue;
    out.sample(it->second.bytes_per_second, {{"peer", it->second.peer}, {"test", std::to_string(it->first)}});
    ++shown;
  }
}

}  // namespace testio::metrics
