// The steps of an iperf3 client's test on this server, in the order run_test() takes them: the
// parameters, the streams gathered, the window the client times, the results both ways, the report.
#include "iperf3/server_session.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <vector>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

#include "control/channel.hpp"
#include "engines/completion_latch.hpp"
#include "session/directions.hpp"
#include "session/test_start.hpp"
#include "iperf3/channel.hpp"
#include "iperf3/messages.hpp"
#include "iperf3/reports.hpp"
#include "iperf3/served_test.hpp"
#include "iperf3/streams.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::iperf3 {

using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto kArrivalLimit = 10s;   // for every data connection after CREATE_STREAMS
constexpr auto kWindowGrace = 40s;    // beyond -t + -O before a silent client is given up on
constexpr auto kResultsLimit = 10s;   // for the client's results after EXCHANGE_RESULTS
constexpr auto kDrainLimit = 5s;      // for the bytes the client says it sent to arrive
constexpr auto kDoneLimit = 5s;       // for IPERF_DONE after DISPLAY_RESULTS

// A test's streams as --metrics sees them while it runs: counted live until the report holds
// their bytes, and, when the test ends without a report (the client went away), what they moved
// is kept, so the counters never go back. Owner: the control thread.
class LiveBytes {
 public:
  LiveBytes(ServedTest& test, metrics::ServerMetrics& metrics, const DataStreams& streams)
      : test_(test), metrics_(metrics) {
    test_.streams = &streams;
  }
  ~LiveBytes() {
    if (!test_.streams) return;
    metrics_.count_unreported(test_.streams->received_total(), test_.streams->sent_total());
    test_.streams = nullptr;
  }
  LiveBytes(const LiveBytes&) = delete;
  LiveBytes& operator=(const LiveBytes&) = delete;
  // The report is about to count them.
  void reported() noexcept { test_.streams = nullptr; }

 private:
  ServedTest& test_;
  metrics::ServerMetrics& metrics_;
};

std::chrono::steady_clock::duration test_end_limit(const Params& params) {
  if (params.total_bytes()) return std::chrono::hours(24 * 365);  // a vanished client closes its connection
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(params.omit_s + params.time_s)) + kWindowGrace;
}

// Waits until every stream this side reads has counted what the client says it sent. With -O the
// client leaves out what it sent before its own omit boundary, which this side cannot know
// exactly: it waits for the streams to fall quiet instead.
asio::awaitable<bool> counted_everything(const DataStreams& streams, const Results& client, bool omitted,
                                         std::chrono::steady_clock::duration limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + limit;
  std::uint64_t last_total = streams.received_total();
  int quiet_ticks = 0;
  for (;;) {
    bool all = true;
    if (omitted) {
      const std::uint64_t total = streams.received_total();
      quiet_ticks = total == last_total ? quiet_ticks + 1 : 0;
      last_total = total;
      all = quiet_ticks >= 20;  // 20 ms without a byte: nothing is in flight on loopback or a LAN
    } else {
      for (const StreamResult& stream : client.streams) {
        std::optional<std::uint32_t> connection = connection_of(stream.id);
        if (connection && streams.receives(*connection) && streams.received(*connection) < stream.bytes) all = false;
      }
    }
    if (all) co_return true;
    if (std::chrono::steady_clock::now() >= give_up) co_return false;
    timer.expires_after(1ms);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

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
  if (params.udp) {
    spec.workload = "udp";
    spec.rate_bps = static_cast<double>(params.bandwidth);  // per stream; absent: unpaced, as iperf3's -b 0
    spec.recv_mode = spec::RecvMode::recv_into;
    // This server's fast paths: -u's defaults, unless its profile's spec is a UDP test that changed them.
    if (workloads::datagrams(config.spec)) spec.settings = config.spec.settings;
  }
  return spec;
}

asio::awaitable<bool> Iperf3Clients::run_test(Control& control, ServedTest& test) {
  const Params params = co_await exchange_params(control, test);
  co_await gather_streams(control, test, params);
  const spec::TestSpec spec = spec_of(params, config_);
  report::StartInfo start = session::start_info(spec, 1, spec::effective_threads(0, params.connections()), false);
  start.peer = test.peer;
  start.client_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
  start.spec.congestion.clear();  // applied as iperf3 asks, not testio's tuning
  start.spec.no_delay = false;
  for (tcp::socket& socket : test.sockets) session::note_connection(start, socket);
  const SocketOptions options{params.window, params.nodelay, params.congestion};
  const workloads::udp::Wire wire =
      params.udp_counters_64bit ? workloads::udp::Wire::iperf3_64 : workloads::udp::Wire::iperf3_32;
  // Named locals, not a conditional around co_await (GCC 12: docs/architecture.md, decisions).
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  std::optional<DataStreams> made;
  if (params.udp)
    made.emplace(executor, std::move(test.udp_sockets), workloads::Side::server, spec, wire, options);
  else
    made.emplace(executor, std::move(test.sockets), workloads::Side::server, spec, options);
  DataStreams& streams = *made;
  streams.describe_start(start);
  for (const std::string& warning : streams.warnings()) spdlog::warn("{}", warning);
  LiveBytes live(test, metrics_, streams);
  co_await run_streams(control, test, params, streams, start);
  const Results client = co_await exchange_results(control, test, params, streams);
  live.reported();
  co_return report(streams, start, client);
}

// What the client wants, checked against this server's caps and what it serves.
asio::awaitable<Params> Iperf3Clients::exchange_params(Control& control, ServedTest& test) {
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
  if (params.authenticated)
    spdlog::warn("the iperf3 client from {} sent an authentication token; testio does not check iperf3's RSA tokens",
                 test.peer);
  spdlog::info("iperf3 test from {} (iperf3 {}): {}", test.peer, params.client_version, describe(params));
  co_return params;
}

// The client opens its streams one by one, each opening with the test's cookie.
asio::awaitable<void> Iperf3Clients::gather_streams(Control& control, ServedTest& test, const Params& params) {
  test.expected = params.connections();
  test.udp = params.udp;
  test.executor = co_await asio::this_coro::executor;
  test.all_arrived = std::make_shared<engines::CompletionLatch>(*test.executor, test.expected);
  test.gathering = true;
  co_await control.write_state(State::create_streams);
  const bool arrived = co_await test.all_arrived->wait(kArrivalLimit);
  test.gathering = false;
  if (!arrived) {
    co_await control.write_error(kErrorStreamAccept);
    throw ProtocolError(std::to_string(test.arrived()) + " of " + std::to_string(test.expected) +
                        (test.udp ? " iperf3 UDP streams" : " iperf3 data connections") + " arrived within 10 s");
  }
}

// Until the client says TEST_END: it times the test (or counts the bytes).
asio::awaitable<void> Iperf3Clients::run_streams(Control& control, ServedTest& test, const Params& params,
                                                 DataStreams& streams, report::StartInfo& start) {
  using namespace asio::experimental::awaitable_operators;
  co_await control.write_state(State::test_start);
  co_await control.write_state(State::test_running);
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  // The live report follows the client's sending streams, or the server's in a reverse test.
  const bool live_sends = params.reverse;
  streams.show_live(reporter_, live_sends);
  streams.begin(engines::TestClock{engines::Clock::now()});
  reporter_.start(session::direction_start(start, streams.connections(live_sends), live_sends));
  test.reported = true;
  auto outcome = co_await (control::capture(control.read_state(test_end_limit(params), "waiting for TEST_END")) ||
                           streams.sample());
  auto& state = std::get<0>(outcome);
  if (state.error) std::rethrow_exception(state.error);
  if (*state.value == State::client_terminate || *state.value == State::iperf_done)
    throw PeerError("the iperf3 client ended the test early");
  expect_state(*state.value, State::test_end, "while the test ran");
}

// The client's results first, then ours once every byte it sent has been counted here.
asio::awaitable<Results> Iperf3Clients::exchange_results(Control& control, ServedTest& test, const Params& params,
                                                         DataStreams& streams) {
  streams.end_window();
  co_await control.write_state(State::exchange_results);
  std::string client_body =
      co_await control.read_json(kResultsLimit, kMaxResultsJson, "waiting for the iperf3 client's results");
  Results client = parse_results(client_body, stream_ids(test.expected));
  if (streams.udp()) {
    // Datagrams lost on the way never come: the receivers end once their flows fall quiet.
    if (streams.receives_any()) co_await streams.receivers_done().wait(kDrainLimit);
  } else if (!co_await counted_everything(streams, client, params.omit_s > 0, kDrainLimit)) {
    spdlog::warn("the iperf3 client from {} reports more bytes sent than arrived here", test.peer);
  }
  co_await streams.senders_done().wait(kDrainLimit);
  streams.finish(&client);
  streams.stop();
  std::string ours = to_json(streams.results());
  co_await control.write_json(std::move(ours));
  co_await control.write_state(State::display_results);
  try {
    State done = co_await control.read_state(kDoneLimit, "waiting for IPERF_DONE");
    if (done != State::iperf_done)
      spdlog::debug("the iperf3 client ended with {}", state_name(static_cast<std::int8_t>(done)));
  } catch (const std::exception&) {
    // A client that just closes is done too.
  }
  co_return client;
}

// testio's own report: forward is the client sending; with --bidir the reverse rides along.
bool Iperf3Clients::report(const DataStreams& streams, const report::StartInfo& start, const Results& client) {
  bool clean = true;
  std::optional<report::TestReport> forward, reverse;
  for (bool local_sends : {false, true}) {
    const DirectionResults& local = local_sends ? streams.sent() : streams.received();
    if (!local.present) continue;
    clean = clean && stats::summarize(local.side.streams).failed_streams == 0;
    (local_sends ? reverse : forward) = direction_report(start, local, local_sends, client);
  }
  report::TestReport whole = session::final_report(std::move(forward), std::move(reverse));
  streams.add_to_report(whole);
  reporter_.end(whole);
  return clean;
}

}  // namespace testio::iperf3
