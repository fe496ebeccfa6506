// A stock iperf3 server as the client's peer: the cookie and the parameters on the control
// connection, the cookie on every data connection (iperf3's UDP handshake for -u), TEST_START and
// TEST_RUNNING, the window this side times, TEST_END, the results both ways, DISPLAY_RESULTS and
// IPERF_DONE. The report puts the server's counts beside this side's.
#include "protocols/iperf3/client_peer.hpp"

#include <optional>

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>

#include "lifecycle/deadline.hpp"
#include "lifecycle/connect.hpp"
#include "protocols/iperf3/channel.hpp"
#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/reports.hpp"
#include "protocols/iperf3/results.hpp"
#include "net/socket_options.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::iperf3 {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using workloads::Side;

constexpr auto kHandshakeLimit = 10s;
constexpr auto kServerResultsLimit = 30s;
constexpr auto kServerStreamsLimit = 5s;  // for the server's streams to close after TEST_END
constexpr auto kSenderStopLimit = 5s;     // for our senders to stop after the window
constexpr auto kWindowGrace = 20s;        // beyond -O + -t: the senders' stop and settle() take up to 10 s
constexpr auto kForever = std::chrono::hours(24 * 365);
constexpr auto kReaderGrace = 5ms;        // for the server's reader to take what its kernel holds
constexpr auto kUdpReaderGrace = 50ms;    // ... its UDP sockets' datagrams

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
  params.tos = spec.tos;
  params.title = config.title;
  params.extra_data = config.extra_data;
  params.get_server_output = config.server_output;
  params.mptcp = config.mptcp;
  params.flow_label = config.flow_label;
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
  if (spec.tos) net::set_tos(socket.native_handle(), static_cast<std::uint8_t>(spec.tos));
  socket.connect(to);
  const std::uint32_t hello = kUdpConnectMessage;  // host order, as iperf3 writes it
  socket.send(asio::buffer(&hello, sizeof(hello)));
  std::uint32_t answer = 0;
  const std::size_t got = co_await lifecycle::within(socket.async_receive(asio::buffer(&answer, sizeof(answer)),
                                                                        asio::use_awaitable),
                                                   kHandshakeLimit, "waiting for the iperf3 server's UDP answer");
  if (got != sizeof(answer) || (answer != kUdpConnectReply && answer != kLegacyUdpConnectReply))
    throw ProtocolError("the iperf3 server answered a UDP stream with something else than its reply");
  co_return socket;
}

// Bytes sent on `send_fds` (TCP sockets) that the peer's kernel has not yet acknowledged
// (SIOCOUTQ): 0 once all of it sits in the peer's receive buffers.
std::uint64_t unacknowledged(const std::vector<int>& send_fds) noexcept {
  std::uint64_t total = 0;
  for (int fd : send_fds) {
    int queued = 0;
    if (ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) total += static_cast<std::uint64_t>(queued);
  }
  return total;
}

// Bytes received so far on the connections this side reads (polled: nothing allocated).
std::uint64_t received_here(lifecycle::TestStreams& streams) {
  const workloads::DirectionLayout& layout = streams.layout();
  std::uint64_t total = 0;
  for (std::uint32_t connection = 0; connection < layout.total(); ++connection)
    if (!layout.sends_on(Side::client, connection))
      total += streams.measurement().counters(connection).bytes.load(std::memory_order_relaxed);
  return total;
}

// One test's iperf3 server. Owner: the control thread, which calls every member.
class Iperf3Peer final : public lifecycle::ClientPeer {
 public:
  explicit Iperf3Peer(const config::Config& config)
      : config_(config),
        params_(params_from(config)),
        layout_(workloads::DirectionLayout::of(config.spec.direction, config.spec.connections)) {}

  std::unique_ptr<workloads::TestSide> make_side(const spec::TestSpec& spec) override {
    using workloads::udp::Wire;
    std::optional<Wire> wire;
    if (params_.udp) wire = params_.udp_counters_64bit ? Wire::iperf3_64 : Wire::iperf3_32;
    return iperf3::make_side(Side::client, spec, wire);
  }
  asio::awaitable<lifecycle::PeerPath> handshake(const spec::TestSpec& spec, unsigned threads) override;
  void describe_start(report::StartInfo& start) const override {
    start.peer = lifecycle::endpoint_text(server_);
    start.server_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
  }
  // Each data connection opens with the cookie; the sending ones are watched by settle().
  asio::awaitable<void> introduce(tcp::socket& socket, std::uint32_t i) override {
    co_await send_cookie(socket, cookie_);
    if (layout_.sends_on(Side::client, i)) send_fds_.push_back(socket.native_handle());
  }
  asio::awaitable<std::optional<asio::ip::udp::socket>> open_flow(std::uint32_t) override {
    if (!params_.udp) co_return std::nullopt;
    co_return co_await open_udp_stream(server_, config_.spec);
  }
  asio::awaitable<void> await_start() override;
  asio::awaitable<void> watch(std::chrono::steady_clock::duration limit) override;
  asio::awaitable<bool> run_window(lifecycle::TestParts& parts, const engines::TestClock& clock,
                                   std::chrono::steady_clock::duration limit) override;
  std::chrono::seconds window_grace() const override { return kWindowGrace; }
  std::string unfinished(const workloads::DirectionLayout& layout) const override {
    return layout.reverse ? "the connections did not finish within the window"
                          : "the senders did not finish within the window";
  }
  void end_window(const workloads::DirectionLayout&) override {
    ended_early_ = true;
    note_window_end();
    if (window_) window_->cancel();
  }
  asio::awaitable<void> conclude(lifecycle::TestParts& parts) override;
  asio::awaitable<std::optional<lifecycle::DirectedResults>> exchange(const lifecycle::DirectedResults& mine,
                                                                  const workloads::TestSide& side,
                                                                  const spec::TestSpec& spec) override;
  report::TestReport side_by_side(const report::StartInfo& start, const workloads::DirectionLayout& layout,
                                  lifecycle::DirectedResults mine,
                                  std::optional<lifecycle::DirectedResults> theirs) override;
  std::string describe(const std::exception& error) const override;

 private:
  asio::awaitable<void> settle();
  // The window ends here (the first call counts): senders' figures run to this moment.
  void note_window_end() {
    if (!window_end_s_) window_end_s_ = static_cast<double>(clock_.since_start(engines::Clock::now())) * 1e-9;
  }

  const config::Config& config_;
  const Params params_;
  const workloads::DirectionLayout layout_;  // the test's connections, as the server numbers them
  std::optional<Control> control_;
  tcp::endpoint server_;
  Cookie cookie_{};
  std::vector<int> send_fds_;  // the sending data connections': open while the streams hold them
  engines::TestClock clock_;
  std::optional<asio::steady_timer> window_;  // while run_window() waits: SIGINT cuts it short
  bool ended_early_ = false;                  // SIGINT ended the window
  std::optional<double> window_end_s_;
  Results server_results_;
};

// Control connection: cookie, parameters. A busy server says so at once.
asio::awaitable<lifecycle::PeerPath> Iperf3Peer::handshake(const spec::TestSpec&, unsigned) {
  std::vector<tcp::endpoint> endpoints = co_await lifecycle::resolve(config_);
  tcp::socket socket = co_await lifecycle::connect_any(endpoints, config_);
  lifecycle::tune_control_connection(socket, config_);
  server_ = socket.remote_endpoint();
  control_.emplace(std::move(socket));
  cookie_ = make_cookie();
  co_await control_->write_cookie(cookie_);
  State state = co_await control_->read_state(kHandshakeLimit, "waiting for the iperf3 server's answer");
  if (state == State::access_denied) {
    std::string busy = "the iperf3 server at ";
    busy.append(lifecycle::endpoint_text(server_)).append(" is busy running a test; try again later");
    throw std::runtime_error(busy);
  }
  expect_state(state, State::param_exchange, "after the cookie");
  std::string params_json = to_json(params_);
  co_await control_->write_json(std::move(params_json));
  state = co_await control_->read_state(kHandshakeLimit, "waiting for the iperf3 server to accept the parameters");
  expect_state(state, State::create_streams, "after the parameters");
  // -u: the flows are this peer's (open_flow()), not data connections the lifecycle opens.
  lifecycle::PeerPath path;
  if (!params_.udp) path.data = {server_};
  co_return path;
}

asio::awaitable<void> Iperf3Peer::await_start() {
  State state = co_await control_->read_state(kHandshakeLimit, "waiting for TEST_START");
  expect_state(state, State::test_start, "after the streams");
  state = co_await control_->read_state(kHandshakeLimit, "waiting for TEST_RUNNING");
  expect_state(state, State::test_running, "after TEST_START");
}

// The server says nothing while the test runs: whatever it sends ends the test.
asio::awaitable<void> Iperf3Peer::watch(std::chrono::steady_clock::duration limit) {
  State state{};
  try {
    state = co_await control_->read_state(limit, "waiting for the test to end");
  } catch (const lifecycle::TimeoutError&) {
    co_return;  // the lifecycle tells why the window did not close
  }
  throw ProtocolError("the iperf3 server sent " + state_name(static_cast<std::int8_t>(state)) + " while the test ran");
}

// The window: this side times the test (or, counted, waits until every byte is sent and, receiving,
// received); the server follows. The streams that read end only after TEST_END (conclude()).
asio::awaitable<bool> Iperf3Peer::run_window(lifecycle::TestParts& parts, const engines::TestClock& clock,
                                             std::chrono::steady_clock::duration) {
  clock_ = clock;
  lifecycle::TestStreams& streams = *parts.front().streams;
  const bool sends = streams.layout().count(true) > 0, receives = streams.layout().count(false) > 0;
  const std::uint64_t receive_total = (!config_.spec.timed() && receives) ? config_.spec.total_bytes : 0;
  window_.emplace(co_await asio::this_coro::executor);
  asio::error_code ignored;
  if (clock.deadline != engines::Clock::time_point::max() && !ended_early_) {
    window_->expires_at(clock.deadline);
    co_await window_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    note_window_end();
    parts.end_window();
  }
  if (sends) co_await streams.done(true).wait(receive_total ? kForever : kSenderStopLimit);
  while (receive_total && received_here(streams) < receive_total && !ended_early_) {
    window_->expires_after(2ms);
    co_await window_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  window_.reset();
  note_window_end();
  parts.end_window();
  if (sends) co_await settle();
  co_return true;
}

// An iperf3 server stops counting when TEST_END arrives, even with bytes still in flight: TEST_END
// goes only once the server's kernel holds every byte sent, and a moment later, when its reader
// has had them.
asio::awaitable<void> Iperf3Peer::settle() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + kSenderStopLimit;
  while (unacknowledged(send_fds_) > 0 && std::chrono::steady_clock::now() < give_up) {
    timer.expires_after(1ms);
    co_await timer.async_wait(asio::use_awaitable);
  }
  // UDP has no acknowledgement to wait for: the server's reader gets a moment more to take what
  // its socket holds (a datagram in flight at TEST_END is lost to an iperf3 server).
  timer.expires_after(params_.udp ? kUdpReaderGrace : kReaderGrace);
  co_await timer.async_wait(asio::use_awaitable);
}

// TEST_END; the server closes its streams, so this side's receivers end now, and asks for results.
asio::awaitable<void> Iperf3Peer::conclude(lifecycle::TestParts& parts) {
  lifecycle::TestStreams& streams = *parts.front().streams;
  co_await control_->write_state(State::test_end);
  State state = co_await control_->read_state(kServerResultsLimit, "waiting for EXCHANGE_RESULTS");
  expect_state(state, State::exchange_results, "after TEST_END");
  bool drained = true;
  if (streams.layout().count(false)) drained = co_await streams.done(false).wait(kServerStreamsLimit);
  if (!drained)
    util::log_warn("the iperf3 server's streams had not closed {} s after TEST_END", kServerStreamsLimit.count());
  co_await streams.done(true).wait(kSenderStopLimit);
}

// Ours first (omitted intervals left out), then the server's, kept for the report.
asio::awaitable<std::optional<lifecycle::DirectedResults>> Iperf3Peer::exchange(const lifecycle::DirectedResults& mine,
                                                                            const workloads::TestSide& side,
                                                                            const spec::TestSpec&) {
  const workloads::DirectionLayout layout = side.layout();
  const auto [sent, received] = by_direction(mine, layout, Side::client, window_end_s_);
  std::string ours = to_json(results_of(sent, received, layout.total(), params_.udp));
  co_await control_->write_json(std::move(ours));
  std::string theirs =
      co_await control_->read_json(kServerResultsLimit, kMaxResultsJson, "waiting for the iperf3 server's results");
  server_results_ = parse_results(theirs, stream_ids(params_.connections()));
  State state = co_await control_->read_state(kServerResultsLimit, "waiting for DISPLAY_RESULTS");
  expect_state(state, State::display_results, "after the results");
  co_await control_->write_state(State::iperf_done);
  co_return std::nullopt;
}

// Forward is testio sending; with --bidir the reverse rides along. The server's counts stand
// beside ours.
report::TestReport Iperf3Peer::side_by_side(const report::StartInfo& start, const workloads::DirectionLayout& layout,
                                            lifecycle::DirectedResults mine, std::optional<lifecycle::DirectedResults>) {
  auto [sent, received] = by_direction(std::move(mine), layout, Side::client, window_end_s_);
  std::optional<report::TestReport> forward, reverse;
  if (sent.present) forward = direction_report(start, sent, true, server_results_);
  if (received.present) reverse = direction_report(start, received, false, server_results_);
  report::TestReport report = lifecycle::final_report(std::move(forward), std::move(reverse));
  report.server_output_json = server_results_.server_output_json;
  report.server_output_text = server_results_.server_output_text;
  return report;
}

std::string Iperf3Peer::describe(const std::exception& error) const {
  if (auto* system = dynamic_cast<const std::system_error*>(&error)) {
    if (system->code() == asio::error::eof || system->code() == asio::error::connection_reset)
      return "the iperf3 server closed the control connection: the test ended early";
    return system->code().message();
  }
  return error.what();
}

}  // namespace

std::unique_ptr<lifecycle::ClientPeer> iperf3_peer(const config::Config& config) {
  return std::make_unique<Iperf3Peer>(config);
}

}  // namespace testio::iperf3
