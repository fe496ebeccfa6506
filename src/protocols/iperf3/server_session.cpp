// An iperf3 client's test on this server: its parameters, checked, become the spec testio runs,
// and the test runs through the one server lifecycle (lifecycle::ServerTest) with an iperf3 peer.
#include "protocols/iperf3/server_session.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <vector>

#include "lifecycle/deadline.hpp"
#include "protocols/iperf3/channel.hpp"
#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/results.hpp"
#include "protocols/iperf3/served.hpp"
#include "protocols/iperf3/server_peer.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "util/log.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::iperf3 {

namespace {

// A test's streams as --metrics sees them while it runs: counted live (ServerTest::bytes_so_far)
// until the report holds their bytes, and, when the test ends without a report (the client went
// away), what they moved is kept, so the counters never go back. Owner: the control thread.
class LiveBytes {
 public:
  LiveBytes(ServedTest& served, metrics::ServerMetrics& metrics, lifecycle::ServerTest& test)
      : served_(served), metrics_(metrics), test_(test) {
    served_.test = &test_;
  }
  ~LiveBytes() {
    served_.started = test_.started();
    served_.test = nullptr;
    if (test_.reported()) return;
    auto [received, sent] = test_.bytes_so_far();
    metrics_.count_unreported(received, sent);
  }
  LiveBytes(const LiveBytes&) = delete;
  LiveBytes& operator=(const LiveBytes&) = delete;

 private:
  ServedTest& served_;
  metrics::ServerMetrics& metrics_;
  lifecycle::ServerTest& test_;
};

std::string describe(const Params& params) {
  std::string what = std::to_string(params.parallel) + (params.parallel == 1 ? " stream" : " streams");
  if (params.reverse) what += ", reverse";
  if (params.bidirectional) what += ", bidirectional";
  if (params.total_bytes()) return what + ", " + std::to_string(params.total_bytes()) + " bytes";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s", params.time_s);
  return what + ", " + seconds;
}

}  // namespace

// The test as testio runs this side of it: the spec of the bulk streams iperf3's parameters ask for.
spec::TestSpec spec_of(const Params& params, const config::Config& config) {
  spec::TestSpec spec;
  spec.connections = params.parallel;
  spec.direction = params.bidirectional ? spec::Direction::bidir
                   : params.reverse     ? spec::Direction::reverse
                                        : spec::Direction::forward;
  spec.total_bytes = params.total_bytes();
  spec.duration_s = spec.total_bytes ? 0 : params.time_s;
  spec.omit_s = params.omit_s;
  spec.interval_s = config.spec.interval_s;
  spec.buffer = params.len;
  spec.window = params.window;
  spec.recv_mode = config.spec.recv_mode;
  spec.congestion = params.congestion;
  spec.no_delay = params.nodelay;
  spec.tos = params.tos;
  if (params.udp) {
    spec.workload = "udp";
    spec.rate_bps = static_cast<double>(params.bandwidth);  // per stream; absent: unpaced, as iperf3's -b 0
    spec.recv_mode = spec::RecvMode::recv_into;
    // This server's fast paths: -u's defaults, unless its profile's spec is a UDP test that changed them.
    if (workloads::datagrams(config.spec)) spec.settings = config.spec.settings;
  }
  return spec;
}

asio::awaitable<bool> Iperf3Clients::run_test(Control& control, ServedTest& served, report::Reporter& reporter) {
  const Params params = co_await exchange_params(control, served);
  const spec::TestSpec spec = spec_of(params, config_);
  if (params.mptcp && !config_.mptcp)
    spdlog::warn("the iperf3 client asked for MPTCP (-m); this server listens for plain TCP, so its connections "
                 "fall back to TCP (testio -s --mptcp listens for both)");
  std::optional<workloads::udp::Wire> wire;
  if (params.udp) wire = params.udp_counters_64bit ? workloads::udp::Wire::iperf3_64 : workloads::udp::Wire::iperf3_32;
  lifecycle::TestParts parts(spec, [&](std::size_t, const spec::TestSpec& part) {
    return make_side(workloads::Side::server, part, wire);
  });
  served.executor = co_await asio::this_coro::executor;
  served.udp = params.udp;
  served.expected = params.connections();
  // Id 0: no testio hello names an iperf3 test (its UDP streams come through the door, by cookie).
  lifecycle::ServerTest test(served.executor, 0, lifecycle::TestRequest{spec, 1, params.client_version, ""},
                           std::move(parts), {}, served.peer_address, served.local_address);
  test.cap_total_rate(config_.limits.max_total_rate_bps, config_.limits.total_rate_window_s);
  LiveBytes live(served, metrics_, test);
  const std::unique_ptr<lifecycle::ServerPeer> client = iperf3_server_peer(control, params, served.peer);
  co_return co_await test.run(*client, reporter);
}

// What the client wants, checked against this server's caps and what it serves.
asio::awaitable<Params> Iperf3Clients::exchange_params(Control& control, ServedTest& served) {
  const auto handshake_limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(config_.limits.handshake_timeout_s, 1.0)));
  co_await control.write_state(State::param_exchange);
  Params params;
  std::string invalid;  // no co_await inside a handler
  try {
    std::string body = co_await control.read_json(handshake_limit, kMaxParamsJson, "waiting for the iperf3 parameters");
    params = parse_params(body, config_.limits);
  } catch (const ProtocolError& error) {
    invalid = std::string("invalid iperf3 parameters: ") + error.what();
  }
  if (!invalid.empty()) {
    co_await control.write_error(kErrorReceiveParams);
    throw ProtocolError(invalid);
  }
  if (params.sctp) {
    co_await control.write_error(kErrorNotImplemented);
    throw ProtocolError("the iperf3 client asked for SCTP, which testio does not serve (TCP and UDP only)");
  }
  if (params.bandwidth && !params.udp && (params.reverse || params.bidirectional)) {
    co_await control.write_error(kErrorNotImplemented);
    throw ProtocolError("the iperf3 client asked testio to pace its sending (-b), which it does not do");
  }
  const double asked_bps = static_cast<double>(params.bandwidth) * params.connections();
  if (config_.limits.max_total_rate_bps > 0 && asked_bps > config_.limits.max_total_rate_bps) {
    co_await control.write_error(kErrorTotalRate);
    throw ProtocolError("the iperf3 client asked for " + util::format_rate(asked_bps) + " in all, above this server's cap of " +
                        util::format_rate(config_.limits.max_total_rate_bps) + " (--server-bitrate-limit)");
  }
  if (params.authenticated)
    spdlog::warn("the iperf3 client from {} sent an authentication token; testio does not check iperf3's RSA tokens",
                 served.peer);
  spdlog::info("iperf3 test from {} (iperf3 {}): {}", served.peer, params.client_version, describe(params));
  co_return params;
}

}  // namespace testio::iperf3
