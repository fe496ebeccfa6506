#include "iperf3/client_session.hpp"

#include <csignal>
#include <ctime>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "control/channel.hpp"
#include "engine/client_signals.hpp"
#include "engine/connect.hpp"
#include "engine/directions.hpp"
#include "engine/test_start.hpp"
#include "iperf3/channel.hpp"
#include "iperf3/messages.hpp"
#include "iperf3/reports.hpp"
#include "iperf3/streams.hpp"
#include "net/socket_options.hpp"

namespace testio::iperf3 {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

constexpr auto kHandshakeLimit = 10s;
constexpr auto kResultsLimit = 30s;
constexpr auto kDrainLimit = 5s;        // for the server's streams to close after TEST_END
constexpr auto kSenderStopLimit = 5s;   // for our senders to stop after the window
constexpr auto kForever = std::chrono::hours(24 * 365);
constexpr auto kReaderGrace = 5ms;      // for the server's reader to take what its kernel holds

Params params_from(const config::Config& config) {
  Params params;
  params.omit_s = config.omit_s;
  params.time_s = config.total_bytes ? 0 : config.duration_s;
  params.bytes = config.total_bytes;
  params.parallel = config.connections;
  params.len = config.buffer;
  params.window = config.window;
  params.reverse = config.reverse;
  params.bidirectional = config.bidir;
  params.mss = config.mss;
  params.nodelay = config.no_delay;
  params.congestion = config.congestion;
  params.client_version = std::string("testio-") + TESTIO_VERSION;
  return params;
}

// The test's window: the deadline of a timed test, or every byte of a counted one sent and received.
asio::awaitable<void> test_window(DataStreams& streams, const workloads::TestClock& clock,
                                  std::uint64_t receive_total, asio::steady_timer& window,
                                  const engine::Interruption& interruption) {
  asio::error_code ignored;
  if (clock.deadline != workloads::Clock::time_point::max()) {
    window.expires_at(clock.deadline);
    co_await window.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    streams.end_window();
  }
  if (streams.sends_any()) co_await streams.senders_done().wait(receive_total ? kForever : kSenderStopLimit);
  while (receive_total && streams.received_total() < receive_total && !interruption.signal) {
    window.expires_after(2ms);
    co_await window.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
}

// An iperf3 server stops counting when TEST_END arrives, even with bytes still in flight: TEST_END
// goes only once the server's kernel holds every byte sent, and a moment later, when its reader
// has had them.
asio::awaitable<void> settle(const DataStreams& streams) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + kSenderStopLimit;
  while (streams.unacknowledged() > 0 && std::chrono::steady_clock::now() < give_up) {
    timer.expires_after(1ms);
    co_await timer.async_wait(asio::use_awaitable);
  }
  timer.expires_after(kReaderGrace);
  co_await timer.async_wait(asio::use_awaitable);
}

std::string describe(const std::exception& error) {
  if (auto* system = dynamic_cast<const std::system_error*>(&error)) {
    if (system->code() == asio::error::eof || system->code() == asio::error::connection_reset)
      return "the iperf3 server closed the control connection: the test ended early";
    return system->code().message();
  }
  return error.what();
}

asio::awaitable<int> iperf3_test(const config::Config& config, report::Reporter& reporter,
                                 engine::Interruption& interruption) {
  auto executor = co_await asio::this_coro::executor;

  // 1. Control connection: cookie, parameters.
  std::vector<tcp::endpoint> endpoints = co_await engine::resolve(config);
  tcp::socket control_socket = co_await engine::connect_any(endpoints, config);
  const tcp::endpoint server = control_socket.remote_endpoint();
  Control control(std::move(control_socket));
  const Cookie cookie = make_cookie();
  co_await control.write_cookie(cookie);
  State state = co_await control.read_state(kHandshakeLimit, "waiting for the iperf3 server's answer");
  if (state == State::access_denied)
    throw std::runtime_error("the iperf3 server at " + control::endpoint_text(server) +
                             " is busy running a test; try again later");
  expect_state(state, State::param_exchange, "after the cookie");
  const Params params = params_from(config);
  std::string params_json = to_json(params);
  co_await control.write_json(std::move(params_json));
  state = co_await control.read_state(kHandshakeLimit, "waiting for the iperf3 server to accept the parameters");
  expect_state(state, State::create_streams, "after the parameters");

  // 2. Data connections, each opening with the cookie: sending streams first in a bidir test.
  const std::uint32_t connections = params.connections();
  report::StartInfo start;
  start.from_client = true;
  start.peer = control::endpoint_text(server);
  start.connecting_host = config.host;
  start.connecting_port = config.port;
  const bool counted = config.total_bytes > 0;
  start.duration_s = counted ? 0 : config.duration_s;
  start.total_bytes = config.total_bytes;
  start.omit_s = config.omit_s;
  start.interval_s = config.interval_s;
  start.buffer = config.buffer;
  start.window = config.window;
  start.recv_mode = config.recv_mode;
  start.rate_lowat = config.rate_lowat;
  start.bidir = params.bidirectional;
  start.congestion_requested = config.congestion;
  start.mss_requested = config.mss;
  std::string clamp_warning;
  // -C, -M, -N go to the iperf3 server in the parameters and onto testio's own sockets here.
  net::TcpTuning tuning;
  tuning.congestion = config.congestion;
  tuning.mss = config.mss;
  tuning.no_delay = config.no_delay;
  auto apply_window = [&](tcp::socket& socket) {
    if (config.window) clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), config.window));
    net::apply_tuning(socket.native_handle(), tuning);
  };
  const std::vector<tcp::endpoint> server_only{server};
  std::vector<tcp::socket> sockets;
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket socket = co_await engine::connect_any(server_only, config, apply_window);
    co_await send_cookie(socket, cookie);
    engine::note_connection(start, socket);
    sockets.push_back(std::move(socket));
  }
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  std::vector<bool> sends(connections, !params.reverse);
  if (params.bidirectional)
    for (std::uint32_t i = params.parallel; i < connections; ++i) sends[i] = false;
  StreamOptions options;
  options.buffer = config.buffer;
  options.recv_mode = config.recv_mode;
  options.interval_s = config.interval_s;
  options.omit_s = config.omit_s;
  options.window_s = counted ? 0 : config.omit_s + config.duration_s;
  options.threads = config.threads;
  options.rate_lowat = config.rate_lowat;
  // A counted test splits -n over the streams of each direction, as iperf3 counts it per side.
  options.send_total = config.total_bytes;
  DataStreams streams(executor, std::move(sockets), sends, options);
  start.client_threads = config::effective_threads(config.threads, connections);
  start.server_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
  state = co_await control.read_state(kHandshakeLimit, "waiting for TEST_START");
  expect_state(state, State::test_start, "after the streams");
  state = co_await control.read_state(kHandshakeLimit, "waiting for TEST_RUNNING");
  expect_state(state, State::test_running, "after TEST_START");

  // 3. The window: this side times the test (or counts the bytes), the server follows.
  workloads::TestClock clock{workloads::Clock::now()};
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  if (!counted)
    clock.deadline = clock.start + std::chrono::duration_cast<workloads::Clock::duration>(
                                       std::chrono::duration<double>(options.window_s));
  streams.begin(clock);
  const bool live_sends = !params.reverse;
  reporter.start(engine::direction_start(start, streams.connections(live_sends), live_sends));
  asio::steady_timer window(executor);
  interruption.end_window = [&streams, &window] {
    streams.end_window();
    window.cancel();
  };
  const std::uint64_t receive_total = (counted && streams.receives_any()) ? config.total_bytes : 0;
  auto outcome = co_await (test_window(streams, clock, receive_total, window, interruption) ||
                           control::capture(control.read_state(kForever, "waiting for the test to end")) ||
                           streams.sample(reporter, live_sends));
  interruption.end_window = nullptr;
  if (outcome.index() == 1) {
    auto& message = std::get<1>(outcome);
    if (message.error) std::rethrow_exception(message.error);
    throw ProtocolError("the iperf3 server sent " + state_name(static_cast<std::int8_t>(*message.value)) +
                        " while the test ran");
  }
  streams.end_window();
  if (streams.sends_any()) co_await settle(streams);

  // 4. TEST_END; the server closes its streams and asks for results: ours first, then its own.
  co_await control.write_state(State::test_end);
  state = co_await control.read_state(kResultsLimit, "waiting for EXCHANGE_RESULTS");
  expect_state(state, State::exchange_results, "after TEST_END");
  if (streams.receives_any() && !co_await streams.receivers_done().wait(kDrainLimit))
    spdlog::warn("the iperf3 server's streams had not closed {} s after TEST_END", kDrainLimit.count());
  co_await streams.senders_done().wait(kSenderStopLimit);
  streams.finish(reporter, live_sends, nullptr);
  streams.stop();
  std::string ours = to_json(streams.results());
  co_await control.write_json(std::move(ours));
  std::string theirs = co_await control.read_json(kResultsLimit, kMaxResultsJson, "waiting for the iperf3 server's results");
  Results server_results = parse_results(theirs, stream_ids(connections));
  state = co_await control.read_state(kResultsLimit, "waiting for DISPLAY_RESULTS");
  expect_state(state, State::display_results, "after the results");
  co_await control.write_state(State::iperf_done);

  // 5. testio's report: forward is testio sending; with --bidir the reverse rides along. The
  // server's counts stand beside ours.
  bool clean = true;
  std::optional<report::TestReport> forward, reverse;
  for (bool local_sends : {true, false}) {
    const DirectionResults& local = local_sends ? streams.sent() : streams.received();
    if (!local.present) continue;
    report::TestReport report = direction_report(start, local, local_sends, server_results);
    if (interruption.signal) {
      report.incomplete = true;
      report.ended_because = interruption.signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM";
    }
    clean = clean && stats::summarize(report.sender.totals).failed_streams == 0 &&
            stats::summarize(report.receiver.totals).failed_streams == 0;
    (local_sends ? forward : reverse) = std::move(report);
  }
  reporter.end(engine::final_report(std::move(forward), std::move(reverse)));
  if (!clean) spdlog::error("some connections ended with an error");
  co_return (clean && !interruption.signal) ? 0 : 1;
}

}  // namespace

int run_iperf3_client(const config::Config& config, report::Reporter& reporter) {
  return engine::run_client_test(
      [&](engine::Interruption& interruption) { return iperf3_test(config, reporter, interruption); }, reporter,
      describe);
}

}  // namespace testio::iperf3
