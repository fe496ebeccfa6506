// An iperf3 client's test on this server: its parameters, checked, become the spec testio runs,
// and the test runs through the one server lifecycle (lifecycle::ServerTest) with an iperf3 peer.
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "lifecycle/connect.hpp"
#include "lifecycle/deadline.hpp"
#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "net/socket_options.hpp"
#include "protocols/iperf3/channel.hpp"
#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/reports.hpp"
#include "protocols/iperf3/results.hpp"
#include "protocols/iperf3/server_peer.hpp"
#include "protocols/iperf3/server_session.hpp"
#include "util/log.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::iperf3 {

// One iperf3 client's test on this server while it runs: what the door needs to hand its streams,
// found by cookie, to the test's ServerTest. Owner: the server's control thread.
struct ServedTest {
  Cookie cookie{};
  std::string peer;
  asio::ip::address peer_address, local_address;  // the control connection's ends
  asio::any_io_executor executor;                 // the control thread's: where UDP streams' sockets are made
  bool udp = false;
  std::uint32_t expected = 0;                     // its data connections (or UDP streams)
  std::uint32_t arrived = 0;                      // ... so far, numbered in the order they came
  lifecycle::ServerTest* test = nullptr;            // from the parameters on, while it runs
  bool started = false;                           // the reporter was given its start

  // Whether a stream arriving now is one of its own.
  bool takes_streams() const noexcept { return test && test->gathering() && arrived < expected; }
};

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
    util::log_warn("the iperf3 client asked for MPTCP (-m); this server listens for plain TCP, so its connections "
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
    util::log_warn("the iperf3 client from {} sent an authentication token; testio does not check iperf3's RSA tokens",
                 served.peer);
  util::log_info("iperf3 test from {} (iperf3 {}): {}", served.peer, params.client_version, describe(params));
  co_return params;
}

// The iperf3 clients at testio's door: a connection whose cookie the server has not seen opens a
// test (within the server's slots, and not on a keyed server); one of a test gathering its
// streams is a data connection, and a UDP datagram of four bytes is a UDP stream saying it is
// there: each goes to the test's lifecycle::ServerTest. What the running tests have counted so far
// is read here for --metrics.

using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

std::string peer_of(const tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : lifecycle::endpoint_text(endpoint);
}

// Best effort: ACCESS_DENIED to a client that is refused, then the socket closes.
asio::awaitable<void> deny(tcp::socket& socket) {
  try {
    const char denied = static_cast<char>(State::access_denied);
    co_await lifecycle::within(asio::async_write(socket, asio::buffer(&denied, 1), asio::use_awaitable), 2s,
                             "refusing an iperf3 connection");
  } catch (const std::exception&) {
  }
}

}  // namespace

asio::awaitable<std::optional<bool>> Iperf3Clients::serve(tcp::socket socket, std::array<unsigned char, 4> first,
                                                          lifecycle::TestSlots& slots,
                                                          std::chrono::steady_clock::duration handshake_limit) {
  const std::string peer = peer_of(socket);
  std::array<unsigned char, kCookieBytes> bytes{};
  std::copy(first.begin(), first.end(), bytes.begin());
  try {
    if (!may_start_cookie(first.data(), first.size())) {
      util::log_warn("connection from {} is not a testio client, nor an iperf3 one; closed", peer);
      co_return std::nullopt;
    }
    co_await lifecycle::within(asio::async_read(socket, asio::buffer(bytes.data() + first.size(), kCookieBytes - first.size()),
                                              asio::use_awaitable),
                             handshake_limit, "waiting for the iperf3 cookie");
  } catch (const std::exception& error) {
    util::log_warn("connection from {} is not a testio client, nor an iperf3 one ({}); closed", peer, error.what());
    co_return std::nullopt;
  }
  if (!is_cookie(bytes.data(), bytes.size())) {
    util::log_warn("connection from {} is not a testio client, nor an iperf3 one; closed", peer);
    co_return std::nullopt;
  }
  const Cookie cookie = cookie_from(bytes.data());
  if (auto found = tests_.find(cookie); found != tests_.end()) {
    ServedTest& served = *found->second;
    if (served.udp || !served.takes_streams()) {
      util::log_warn("iperf3 data connection from {} arrived outside its test's set-up; closed", peer);
      co_await deny(socket);
      co_return std::nullopt;
    }
    const std::string refused = served.test->attach(served.arrived++, std::move(socket));
    if (!refused.empty()) util::log_warn("iperf3 data connection from {} refused: {}", peer, refused);
    co_return std::nullopt;
  }
  if (!config_.psk_file.empty()) {
    // iperf3 clients cannot prove testio's key; a keyed server does not serve them at all.
    util::log_warn("refused an iperf3 test from {}: this server requires a key (--psk-file), which iperf3 cannot give",
                 peer);
    Control refused(std::move(socket));
    co_await refused.write_error(kErrorAuthorization);
    co_return std::nullopt;
  }
  if (!slots.try_take()) {
    slots.count_busy();
    util::log_info("refused an iperf3 test from {}: busy", peer);
    co_await deny(socket);
    co_return std::nullopt;
  }
  ServedTest served;
  served.cookie = cookie;
  served.peer = peer;
  asio::error_code unknown;
  served.peer_address = socket.remote_endpoint(unknown).address();
  served.local_address = socket.local_endpoint(unknown).address();
  tests_.emplace(cookie, &served);
  Control control(std::move(socket));
  const std::unique_ptr<metrics::ServedTestReport> report = metrics_.test_report(peer);
  const std::string who = "iperf3 test #" + std::to_string(report->number()) + " from " + peer;
  bool succeeded = false;
  std::string ended;
  try {
    succeeded = co_await run_test(control, served, *report);
    util::log_info("{} finished", who);
  } catch (const PeerError& error) {
    ended = error.what();
  } catch (const std::system_error& error) {
    ended = "the iperf3 client went away (" + error.code().message() + ")";
  } catch (const std::exception& error) {
    ended = error.what();
  }
  tests_.erase(cookie);
  slots.release();
  if (!ended.empty()) {
    util::log_warn("{} ended: {}", who, ended);
    if (served.started) report->error(ended);
  }
  co_return succeeded;
}

std::pair<std::uint64_t, std::uint64_t> Iperf3Clients::bytes_so_far() const noexcept {
  std::uint64_t received = 0, sent = 0;
  for (const auto& [cookie, served] : tests_) {
    if (!served->test) continue;
    auto [test_received, test_sent] = served->test->bytes_so_far();
    received += test_received;
    sent += test_sent;
  }
  return {received, sent};
}

// iperf3's UDP stream says it is there with four bytes (its UDP_CONNECT_MSG, in the client's
// byte order); the server connects a socket of the same port to it and answers from that socket.
bool Iperf3Clients::take_datagram(const unsigned char* data, std::size_t size, const asio::ip::udp::endpoint& from,
                                  std::uint16_t port) {
  (void)data;  // iperf3's own server does not read it either
  if (size != kUdpConnectBytes) return false;
  for (auto& [cookie, served] : tests_) {
    if (!served->udp || !served->takes_streams() || served->peer_address != from.address()) continue;
    try {
      asio::ip::udp::socket socket(served->executor);
      const asio::ip::udp::endpoint local(served->local_address, port);
      socket.open(local.protocol());
      socket.set_option(asio::socket_base::reuse_address(true));
      socket.bind(local);
      socket.connect(from);
      const std::uint32_t reply = kUdpConnectReply;  // host order, as iperf3 writes it
      socket.send(asio::buffer(&reply, sizeof(reply)));
      const std::string refused = served->test->gather_flow(served->arrived++, std::move(socket));
      if (!refused.empty()) util::log_warn("an iperf3 UDP stream from {} was refused: {}", served->peer, refused);
    } catch (const std::system_error& error) {
      util::log_warn("an iperf3 UDP stream from {} could not be taken: {}", served->peer, error.code().message());
    }
    return true;
  }
  return false;
}

// An iperf3 client as the server's peer: what its protocol says around the one server lifecycle
// (lifecycle/server_lifecycle.cpp), and how its figures are exchanged and reported.
namespace {

using workloads::Side;

constexpr auto kClientSilenceGrace = 40s;  // beyond -t + -O before a silent client is given up on
constexpr auto kClientResultsLimit = 10s;  // for the client's results after EXCHANGE_RESULTS
constexpr auto kClientBytesLimit = 5s;     // for the bytes the client says it sent to arrive
constexpr auto kDoneLimit = 5s;       // for IPERF_DONE after DISPLAY_RESULTS

std::chrono::steady_clock::duration test_end_limit(const Params& params) {
  if (params.total_bytes()) return std::chrono::hours(24 * 365);  // a vanished client closes its connection
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(params.omit_s + params.time_s)) + kClientSilenceGrace;
}

bool receives(const workloads::DirectionLayout& layout, std::uint32_t connection) noexcept {
  return connection < layout.total() && !layout.sends_on(Side::server, connection);
}

// Bytes received so far on connection `connection` (0 if this side sends on it).
std::uint64_t received(lifecycle::TestStreams& streams, std::uint32_t connection) noexcept {
  if (!receives(streams.layout(), connection)) return 0;
  return streams.measurement().counters(connection).bytes.load(std::memory_order_relaxed);
}

std::uint64_t received_total(lifecycle::TestStreams& streams) noexcept {
  std::uint64_t total = 0;
  for (std::uint32_t connection = 0; connection < streams.layout().total(); ++connection)
    total += received(streams, connection);
  return total;
}

// Waits until every stream this side reads has counted what the client says it sent. With -O the
// client leaves out what it sent before its own omit boundary, which this side cannot know
// exactly: it waits for the streams to fall quiet instead.
asio::awaitable<bool> counted_everything(lifecycle::TestStreams& streams, const Results& client, bool omitted,
                                         std::chrono::steady_clock::duration limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + limit;
  std::uint64_t last_total = received_total(streams);
  int quiet_ticks = 0;
  for (;;) {
    bool all = true;
    if (omitted) {
      const std::uint64_t total = received_total(streams);
      quiet_ticks = total == last_total ? quiet_ticks + 1 : 0;
      last_total = total;
      all = quiet_ticks >= 20;  // 20 ms without a byte: nothing is in flight on loopback or a LAN
    } else {
      for (const StreamResult& stream : client.streams) {
        std::optional<std::uint32_t> connection = connection_of(stream.id);
        if (connection && receives(streams.layout(), *connection) && received(streams, *connection) < stream.bytes)
          all = false;
      }
    }
    if (all) co_return true;
    if (std::chrono::steady_clock::now() >= give_up) co_return false;
    timer.expires_after(1ms);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

// iperf3's own server goes on with the default when an option is refused; so does this side.
void apply_options(tcp::socket& socket, const Params& params, std::vector<std::string>& warnings) {
  const int fd = socket.native_handle();
  if (params.window) {
    std::string clamped = net::clamp_warning(net::set_socket_buffers(fd, params.window));
    if (!clamped.empty() && warnings.empty()) warnings.push_back(clamped);
  }
  // One option at a time, so a refused congestion control does not skip no-delay.
  net::TcpTuning no_delay, congestion, tos;
  no_delay.no_delay = params.nodelay;
  congestion.congestion = params.congestion;
  tos.tos = static_cast<std::uint8_t>(params.tos);
  for (const net::TcpTuning& tuning : {no_delay, congestion, tos}) {
    try {
      net::apply_tuning(fd, tuning);
    } catch (const std::runtime_error& refused) {
      if (warnings.size() < 2) warnings.push_back(std::string(refused.what()) + "; the default is used");
    }
  }
}

// One test's iperf3 client. Owner: the control thread, which calls every member.
class Iperf3ServerPeer final : public lifecycle::ServerPeer {
 public:
  Iperf3ServerPeer(Control& control, const Params& params, std::string name)
      : control_(control), params_(params), name_(std::move(name)) {}

  std::string name() const override { return name_; }
  asio::awaitable<void> accept(const lifecycle::ServerTest&) override {
    co_await control_.write_state(State::create_streams);
  }
  bool gathers_flows() const override { return params_.udp; }
  asio::awaitable<void> watch_gathering(std::chrono::steady_clock::duration limit) override;
  asio::awaitable<void> gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                         std::chrono::seconds within) override;
  asio::awaitable<void> total_rate_exceeded(const std::string& why) override;
  void tune(tcp::socket& socket, const spec::TestSpec&, bool, std::vector<std::string>& warnings) override {
    apply_options(socket, params_, warnings);
  }
  void tune_flow(asio::ip::udp::socket& socket, const spec::TestSpec&, std::vector<std::string>& warnings) override {
    if (params_.tos) {
      try {
        net::set_tos(socket.native_handle(), static_cast<std::uint8_t>(params_.tos));
      } catch (const std::runtime_error& refused) {
        if (warnings.size() < 2) warnings.push_back(std::string(refused.what()) + "; the default is used");
      }
    }
    if (!params_.window) return;
    std::string clamped = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), params_.window));
    if (!clamped.empty() && warnings.empty()) warnings.push_back(clamped);
  }
  void describe_start(report::StartInfo& start) const override {
    start.client_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
    start.spec.congestion.clear();  // applied as iperf3 asks, not testio's tuning
    start.spec.no_delay = false;
  }
  // The client times the window (or counts the bytes): no deadline here.
  engines::TestClock clock(const spec::TestSpec&) override { return clock_ = engines::TestClock{engines::Clock::now()}; }
  asio::awaitable<void> before_window() override {
    co_await control_.write_state(State::test_start);
    co_await control_.write_state(State::test_running);
  }
  asio::awaitable<void> client_done(lifecycle::TestParts& parts, const spec::TestSpec& spec) override;
  asio::awaitable<void> conclude(lifecycle::TestParts& parts) override;
  asio::awaitable<void> exchange(lifecycle::TestParts& parts) override;
  report::TestReport side_by_side(lifecycle::TestPart& part) override;

 private:
  Control& control_;
  const Params params_;
  const std::string name_;
  engines::TestClock clock_;
  std::optional<double> window_end_s_;
  Results client_;
  DirectionResults sent_, received_;
};

// The client reads its control connection between writes: the streams stay open until it has
// gone (or 2 s, whatever it sends meanwhile), else a write that fails as they close is the error
// it prints instead.
asio::awaitable<void> Iperf3ServerPeer::total_rate_exceeded(const std::string&) {
  co_await control_.write_error(kErrorTotalRate);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  try {
    while (std::chrono::steady_clock::now() < deadline)
      (void)co_await control_.read_state(deadline - std::chrono::steady_clock::now(),
                                         "waiting for the iperf3 client to go");
  } catch (const std::exception&) {  // it went (end of file), or the wait is over
  }
}

// An iperf3 client says nothing while its streams connect, unless it is interrupted or gone.
asio::awaitable<void> Iperf3ServerPeer::watch_gathering(std::chrono::steady_clock::duration limit) {
  const State state = co_await control_.read_state(limit, "while its streams connected");
  if (state == State::client_terminate || state == State::iperf_done)
    throw PeerError("the iperf3 client ended the test before it started");
  throw ProtocolError("the iperf3 client sent " + state_name(static_cast<std::int8_t>(state)) +
                      " while its streams connected");
}

asio::awaitable<void> Iperf3ServerPeer::gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                                         std::chrono::seconds within) {
  co_await control_.write_error(kErrorStreamAccept);
  std::string why = std::to_string(arrived) + " of " + std::to_string(expected);
  why.append(params_.udp ? " iperf3 UDP streams" : " iperf3 data connections")
      .append(" arrived within ")
      .append(std::to_string(within.count()))
      .append(" s");
  throw ProtocolError(why);
}

// Until the client says TEST_END: it times the test (or counts the bytes).
asio::awaitable<void> Iperf3ServerPeer::client_done(lifecycle::TestParts&, const spec::TestSpec&) {
  const State state = co_await control_.read_state(test_end_limit(params_), "waiting for TEST_END");
  if (state == State::client_terminate || state == State::iperf_done)
    throw PeerError("the iperf3 client ended the test early");
  expect_state(state, State::test_end, "while the test ran");
}

// The client's results first; then every byte it sent is counted here, and the senders stop.
asio::awaitable<void> Iperf3ServerPeer::conclude(lifecycle::TestParts& parts) {
  // The senders' figures run to this moment even when a sender's last write completed earlier, as
  // iperf3 times its streams.
  window_end_s_ = static_cast<double>(clock_.since_start(engines::Clock::now())) * 1e-9;
  lifecycle::TestStreams& streams = *parts.front().streams;
  co_await control_.write_state(State::exchange_results);
  std::string client_body =
      co_await control_.read_json(kClientResultsLimit, kMaxResultsJson, "waiting for the iperf3 client's results");
  client_ = parse_results(client_body, stream_ids(params_.connections()));
  // The server reads the forward direction (the client's sending) and sends the reverse one.
  const bool receives = streams.layout().count(true) > 0;
  if (params_.udp) {
    // Datagrams lost on the way never come: the receivers end once their flows fall quiet.
    if (receives) co_await streams.done(true).wait(kClientBytesLimit);
  } else if (!co_await counted_everything(streams, client_, params_.omit_s > 0, kClientBytesLimit)) {
    util::log_warn("the iperf3 client from {} reports more bytes sent than arrived here", name_);
  }
  co_await streams.done(false).wait(kClientBytesLimit);
}

// Ours, with every connection by its iperf3 id; then DISPLAY_RESULTS and the client's IPERF_DONE.
asio::awaitable<void> Iperf3ServerPeer::exchange(lifecycle::TestParts& parts) {
  lifecycle::TestPart& part = parts.front();
  std::tie(sent_, received_) = by_direction(*part.mine, part.layout, Side::server, window_end_s_);
  // A stream this side reads that has not seen EOF still ended cleanly if it counted every byte the
  // client says it sent: an iperf3 client closes only after the results. (The client leaves its
  // omitted bytes out; this side's totals still hold them.)
  for (const StreamResult& stream : client_.streams) {
    std::optional<std::uint32_t> connection = connection_of(stream.id);
    if (!connection || !receives(part.layout, *connection)) continue;
    stats::StreamFigures& figures = received_.side.streams[part.layout.index_in_direction(*connection)];
    if (figures.bytes >= stream.bytes) figures.failed = false;
  }
  Results ours = results_of(sent_, received_, part.layout.total(), params_.udp);
  if (params_.get_server_output) ours.server_output_text = output_text(sent_, received_);
  co_await control_.write_json(to_json(ours));
  co_await control_.write_state(State::display_results);
  try {
    State done = co_await control_.read_state(kDoneLimit, "waiting for IPERF_DONE");
    if (done != State::iperf_done)
      util::log_debug("the iperf3 client ended with {}", state_name(static_cast<std::int8_t>(done)));
  } catch (const std::exception&) {
    // A client that just closes is done too.
  }
}

// Forward is the client sending; with --bidir the reverse rides along. The client's counts stand
// beside ours.
report::TestReport Iperf3ServerPeer::side_by_side(lifecycle::TestPart& part) {
  std::optional<report::TestReport> forward, reverse;
  if (received_.present) forward = direction_report(part.start, received_, false, client_);
  if (sent_.present) reverse = direction_report(part.start, sent_, true, client_);
  return lifecycle::final_report(std::move(forward), std::move(reverse));
}

}  // namespace

std::unique_ptr<lifecycle::ServerPeer> iperf3_server_peer(Control& control, const Params& params, std::string name) {
  return std::make_unique<Iperf3ServerPeer>(control, params, std::move(name));
}

}  // namespace testio::iperf3
