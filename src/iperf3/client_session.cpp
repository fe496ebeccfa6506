#include "iperf3/client_session.hpp"

#include <csignal>
#include <ctime>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>

#include "control/channel.hpp"
#include "session/client_signals.hpp"
#include "session/connect.hpp"
#include "session/directions.hpp"
#include "session/test_start.hpp"
#include "iperf3/channel.hpp"
#include "iperf3/messages.hpp"
#include "iperf3/reports.hpp"
#include "iperf3/streams.hpp"
#include "net/socket_options.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

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
constexpr auto kUdpReaderGrace = 50ms;  // ... its UDP sockets' datagrams

Params params_from(const config::Config& config) {
  const spec::TestSpec& spec = config.spec;
  Params params;
  params.omit_s = spec.omit_s;
  params.time_s = spec.duration_s;
  params.bytes = spec.total_bytes;
  params.parallel = spec.connections;
  params.len = spec.buffer;
  params.window = spec.window;
  params.reverse = spec.direction == spec::Direction::reverse;
  params.bidirectional = spec.direction == spec::Direction::bidir;
  params.mss = config.mss;
  params.nodelay = spec.no_delay;
  params.congestion = spec.congestion;
  params.client_version = std::string("testio-") + TESTIO_VERSION;
  if (workloads::datagrams(spec)) {
    params.udp = true;
    params.udp_counters_64bit = config.udp_counters_64bit;
    params.bandwidth = static_cast<std::uint64_t>(spec.rate_bps);  // per stream; 0 = unpaced (-b 0)
  }
  return params;
}

// iperf3's UDP stream set-up: a socket connected to the server's port says it is there in four
// bytes, and the server answers from the socket it connected back to this one.
asio::awaitable<asio::ip::udp::socket> open_udp_stream(const tcp::endpoint& server, const spec::TestSpec& spec) {
  asio::ip::udp::socket socket(co_await asio::this_coro::executor);
  const asio::ip::udp::endpoint to(server.address(), server.port());
  socket.open(to.protocol());
  if (spec.window) (void)net::set_socket_buffers(socket.native_handle(), spec.window);
  socket.connect(to);
  const std::uint32_t hello = kUdpConnectMessage;  // host order, as iperf3 writes it
  socket.send(asio::buffer(&hello, sizeof(hello)));
  std::uint32_t answer = 0;
  const std::size_t got = co_await control::within(socket.async_receive(asio::buffer(&answer, sizeof(answer)),
                                                                        asio::use_awaitable),
                                                   kHandshakeLimit, "waiting for the iperf3 server's UDP answer");
  if (got != sizeof(answer) || (answer != kUdpConnectReply && answer != kLegacyUdpConnectReply))
    throw ProtocolError("the iperf3 server answered a UDP stream with something else than its reply");
  co_return socket;
}

// The test's window: the deadline of a timed test, or every byte of a counted one sent and received.
asio::awaitable<void> test_window(DataStreams& streams, const engines::TestClock& clock,
                                  std::uint64_t receive_total, asio::steady_timer& window,
                                  const session::Interruption& interruption) {
  asio::error_code ignored;
  if (clock.deadline != engines::Clock::time_point::max()) {
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
  // UDP has no acknowledgement to wait for: the server's reader gets a moment more to take what
  // its socket holds (a datagram in flight at TEST_END is lost to an iperf3 server).
  timer.expires_after(streams.udp() ? kUdpReaderGrace : kReaderGrace);
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

// One test against a stock iperf3 server. Owner: the control thread, which runs every step.
class Iperf3Test {
 public:
  Iperf3Test(const config::Config& config, report::Reporter& reporter, session::Interruption& interruption)
      : config_(config), reporter_(reporter), interruption_(interruption), params_(params_from(config)) {}

  asio::awaitable<int> run() {
    co_await exchange_params();
    co_await open_streams();
    co_await run_window();
    co_await exchange_results();
    co_return report();
  }

 private:
  asio::awaitable<void> exchange_params();
  asio::awaitable<void> open_streams();
  asio::awaitable<void> await_test_running();
  asio::awaitable<void> run_window();
  asio::awaitable<void> exchange_results();
  int report();

  const config::Config& config_;
  report::Reporter& reporter_;
  session::Interruption& interruption_;
  const Params params_;
  std::optional<Control> control_;
  tcp::endpoint server_;
  Cookie cookie_{};
  report::StartInfo start_;
  std::optional<DataStreams> streams_;
  Results server_results_;
};

// Control connection: cookie, parameters.
asio::awaitable<void> Iperf3Test::exchange_params() {
  std::vector<tcp::endpoint> endpoints = co_await session::resolve(config_);
  tcp::socket socket = co_await session::connect_any(endpoints, config_);
  server_ = socket.remote_endpoint();
  control_.emplace(std::move(socket));
  cookie_ = make_cookie();
  co_await control_->write_cookie(cookie_);
  State state = co_await control_->read_state(kHandshakeLimit, "waiting for the iperf3 server's answer");
  if (state == State::access_denied)
    throw std::runtime_error("the iperf3 server at " + control::endpoint_text(server_) +
                             " is busy running a test; try again later");
  expect_state(state, State::param_exchange, "after the cookie");
  std::string params_json = to_json(params_);
  co_await control_->write_json(std::move(params_json));
  state = co_await control_->read_state(kHandshakeLimit, "waiting for the iperf3 server to accept the parameters");
  expect_state(state, State::create_streams, "after the parameters");
}

// Data connections, each opening with the cookie: sending streams first in a bidir test. -C, -M,
// -N and -w went to the server in the parameters and go onto testio's own sockets here.
asio::awaitable<void> Iperf3Test::open_streams() {
  const spec::TestSpec& spec = config_.spec;
  const std::uint32_t connections = params_.connections();
  start_ = session::start_info(spec, spec::effective_threads(spec.threads, connections), 1, /*from_client=*/true);
  start_.peer = control::endpoint_text(server_);
  start_.connecting_host = config_.host;
  start_.connecting_port = config_.port;
  start_.mss_requested = config_.mss;
  start_.server_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
  std::string clamp_warning;
  auto tune = [&](tcp::socket& socket) {
    std::string clamped = session::tune_data_connection(socket.native_handle(), spec, true, config_.mss);
    if (!clamped.empty()) clamp_warning = clamped;
  };
  const std::vector<tcp::endpoint> server_only{server_};
  if (params_.udp) {
    std::vector<asio::ip::udp::socket> flows;
    for (std::uint32_t i = 0; i < connections; ++i) {
      asio::ip::udp::socket flow = co_await open_udp_stream(server_, spec);
      flows.push_back(std::move(flow));
    }
    streams_.emplace(co_await asio::this_coro::executor, std::move(flows), workloads::Side::client, spec,
                     params_.udp_counters_64bit ? workloads::udp::Wire::iperf3_64 : workloads::udp::Wire::iperf3_32);
    streams_->describe_start(start_);
    co_await await_test_running();
    co_return;
  }
  std::vector<tcp::socket> sockets;
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket socket = co_await session::connect_any(server_only, config_, tune);
    co_await send_cookie(socket, cookie_);
    session::note_connection(start_, socket);
    sockets.push_back(std::move(socket));
  }
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  // A counted test splits -n over the streams of each direction, as iperf3 counts it per side.
  streams_.emplace(co_await asio::this_coro::executor, std::move(sockets), workloads::Side::client, spec);
  streams_->describe_start(start_);
  co_await await_test_running();
}

asio::awaitable<void> Iperf3Test::await_test_running() {
  State state = co_await control_->read_state(kHandshakeLimit, "waiting for TEST_START");
  expect_state(state, State::test_start, "after the streams");
  state = co_await control_->read_state(kHandshakeLimit, "waiting for TEST_RUNNING");
  expect_state(state, State::test_running, "after TEST_START");
}

// The window: this side times the test (or counts the bytes), the server follows.
asio::awaitable<void> Iperf3Test::run_window() {
  const spec::TestSpec& spec = config_.spec;
  const engines::TestClock clock = engines::TestClock::starting_now(spec);
  start_.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  const bool live_sends = !params_.reverse;
  streams_->show_live(reporter_, live_sends);
  streams_->begin(clock);
  reporter_.start(session::direction_start(start_, streams_->connections(live_sends), live_sends));
  asio::steady_timer window(co_await asio::this_coro::executor);
  DataStreams& streams = *streams_;
  interruption_.end_window = [&streams, &window] {
    streams.end_window();
    window.cancel();
  };
  const std::uint64_t receive_total = (!spec.timed() && streams.receives_any()) ? spec.total_bytes : 0;
  auto outcome = co_await (test_window(streams, clock, receive_total, window, interruption_) ||
                           control::capture(control_->read_state(kForever, "waiting for the test to end")) ||
                           streams.sample());
  interruption_.end_window = nullptr;
  if (outcome.index() == 1) {
    auto& message = std::get<1>(outcome);
    if (message.error) std::rethrow_exception(message.error);
    throw ProtocolError("the iperf3 server sent " + state_name(static_cast<std::int8_t>(*message.value)) +
                        " while the test ran");
  }
  streams.end_window();
  if (streams.sends_any()) co_await settle(streams);
}

// TEST_END; the server closes its streams and asks for results: ours first, then its own.
asio::awaitable<void> Iperf3Test::exchange_results() {
  DataStreams& streams = *streams_;
  co_await control_->write_state(State::test_end);
  State state = co_await control_->read_state(kResultsLimit, "waiting for EXCHANGE_RESULTS");
  expect_state(state, State::exchange_results, "after TEST_END");
  bool drained = true;
  if (streams.receives_any()) drained = co_await streams.receivers_done().wait(kDrainLimit);
  if (!drained)
    spdlog::warn("the iperf3 server's streams had not closed {} s after TEST_END", kDrainLimit.count());
  co_await streams.senders_done().wait(kSenderStopLimit);
  streams.finish(nullptr);
  streams.stop();
  std::string ours = to_json(streams.results());
  co_await control_->write_json(std::move(ours));
  std::string theirs =
      co_await control_->read_json(kResultsLimit, kMaxResultsJson, "waiting for the iperf3 server's results");
  server_results_ = parse_results(theirs, stream_ids(params_.connections()));
  state = co_await control_->read_state(kResultsLimit, "waiting for DISPLAY_RESULTS");
  expect_state(state, State::display_results, "after the results");
  co_await control_->write_state(State::iperf_done);
}

// testio's report: forward is testio sending; with --bidir the reverse rides along. The server's
// counts stand beside ours.
int Iperf3Test::report() {
  bool clean = true;
  std::optional<report::TestReport> forward, reverse;
  for (bool local_sends : {true, false}) {
    const DirectionResults& local = local_sends ? streams_->sent() : streams_->received();
    if (!local.present) continue;
    report::TestReport report = direction_report(start_, local, local_sends, server_results_);
    if (interruption_.signal) {
      report.incomplete = true;
      report.ended_because = session::interruption_text(interruption_.signal);
    }
    clean = clean && stats::summarize(report.sender.totals).failed_streams == 0 &&
            stats::summarize(report.receiver.totals).failed_streams == 0;
    (local_sends ? forward : reverse) = std::move(report);
  }
  report::TestReport whole = session::final_report(std::move(forward), std::move(reverse));
  streams_->add_to_report(whole);
  reporter_.end(whole);
  if (!clean) spdlog::error("some connections ended with an error");
  return (clean && !interruption_.signal) ? 0 : 1;
}

}  // namespace

int run_iperf3_client(const config::Config& config, report::Reporter& reporter) {
  auto test = [&](session::Interruption& interruption) -> asio::awaitable<int> {
    Iperf3Test iperf3(config, reporter, interruption);
    co_return co_await iperf3.run();
  };
  return session::run_client_test(test, reporter, describe);
}

}  // namespace testio::iperf3
