// A testio server as the client's peer: the control connection (preamble, hello and the key's
// answer, the request and the server's answer), a preamble on every data connection, the start
// frame, the server's frames while the test runs, and the figures each side sends the other.
#include <sys/socket.h>

#include <asio/co_spawn.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/detached.hpp>
#include <asio/write.hpp>
#include <nlohmann/json.hpp>

#include "protocols/testio/client_peer.hpp"

#include "protocols/testio/auth.hpp"
#include "protocols/testio/channel.hpp"
#include "protocols/testio/protocol.hpp"
#include "lifecycle/client_peer.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"

namespace testio::control {
namespace {

using lifecycle::ClientPeer;
using lifecycle::PeerPath;
using lifecycle::TestParts;
using lifecycle::data_tuning;

using asio::ip::tcp;
using namespace std::chrono_literals;
using workloads::Side;

constexpr auto kHandshakeLimit = 10s;
// For the server's answer and its start: a server that stopped is found by its silence
// (--stall-timeout); a living one may take longer when many tests start at once on few cores,
// and gathers the data connections for up to a minute.
constexpr auto kSetUpLimit = 70s;
constexpr auto kResultsLimit = 60s;  // receivers drain what is still in flight, then answer
constexpr auto kWindowGrace = 30s;   // beyond -O + -t before the client gives up on its streams

std::chrono::steady_clock::duration seconds(double count) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(count));
}

// How the server's clock relates to this one's, over the control connection `control`: one clock
// when the server is this host, else NTP's estimate from the request sent at `asked_ns` and the
// answer `accepted` had at `answered_ns` (CLOCK_REALTIME).
stats::PeerClock clock_of(const asio::ip::tcp::socket& control, std::uint64_t asked_ns,
                          const control::TestAccepted& accepted, std::uint64_t answered_ns) {
  asio::error_code unknown;
  const asio::ip::address local = control.local_endpoint(unknown).address();
  const asio::ip::address server = control.remote_endpoint(unknown).address();
  if (server.is_loopback() || server == local) {
    stats::PeerClock shared;
    shared.kind = stats::PeerClock::Kind::shared;
    return shared;
  }
  return stats::PeerClock::estimated_from(asked_ns, accepted.server_received_ns, accepted.server_clock_ns, answered_ns);
}

asio::awaitable<void> send_preamble(tcp::socket& socket, const control::Preamble& preamble) {
  control::PreambleBytes bytes = control::encode_preamble(preamble);
  co_await control::within(asio::async_write(socket, asio::buffer(bytes), asio::use_awaitable), kHandshakeLimit,
                           "sending the connection preamble");
}

// The answer to the server's challenge, when it sets one.
std::string answer_challenge(const control::ServerHello& hello, const config::Config& config) {
  if (hello.auth != "hmac-sha256") {
    if (!config.psk_file.empty()) util::log_warn("the server does not ask for a key: --psk-file is unused");
    return {};
  }
  if (config.psk_file.empty()) throw std::runtime_error("the server requires a pre-shared key: give it with --psk-file");
  bool readable_by_others = false;
  std::string key = control::load_psk(config.psk_file, readable_by_others);
  if (readable_by_others) util::log_warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
  return control::auth_response(key, hello.nonce);
}

// The server's hello, or the refusal it sent in its place (at the door, or busy).
control::ServerHello hello_or_refusal(const nlohmann::json& message) {
  try {
    return control::parse_server_hello(message);
  } catch (const control::PeerError& refusal) {
    throw std::runtime_error(std::string("the server refused the connection: ") + refusal.what());
  }
}

// The totals and CPU the server needs to report, without our intervals.
control::DirectedResults summary_of(const control::DirectedResults& results) {
  auto summary = [](const control::SideResults& side) {
    control::SideResults kept;
    kept.streams = side.streams, kept.cpu = side.cpu, kept.wall_s = side.wall_s;
    kept.congestion = side.congestion, kept.digests = side.digests, kept.cores = side.cores;
    kept.evidence = side.evidence;
    return kept;
  };
  control::DirectedResults summarized;
  summarized.forward = summary(results.forward);
  if (results.reverse) summarized.reverse = summary(*results.reverse);
  return summarized;
}

// The intervals the server's figures may carry: the window's at -i, or an hour's for a counted test.
std::uint64_t expected_intervals(const spec::TestSpec& spec) {
  constexpr double kCountedSeconds = 3600;
  const double seconds = spec.timed() ? spec.window_s() : kCountedSeconds;
  return (spec.interval_s > 0 ? static_cast<std::uint64_t>(seconds / spec.interval_s) : 0) + 3;
}

// Owner: the control thread.
class TestioPeer : public ClientPeer {
 public:
  explicit TestioPeer(const config::Config& config) : config_(config) {}

  asio::awaitable<PeerPath> handshake(const spec::TestSpec& spec, unsigned threads) override;
  void describe_start(report::StartInfo& start) const override {
    start.server_threads = accepted_.server_threads;
    start.peer_version = accepted_.server_version;
    start.server_cpus = accepted_.server_cpus;
    start.peer_clock = clock_;
    start.peer = endpoint_text(server_);
  }
  std::int64_t clock_offset_ns() const override { return clock_.offset_ns; }
  control::PreambleBytes preamble(std::uint32_t i) const override {
    return control::encode_preamble({control::ConnectionKind::data, control::kProtocolVersion, accepted_.test_id, i});
  }
  std::uint64_t test_id() const override { return accepted_.test_id; }
  asio::awaitable<void> introduce(tcp::socket& socket, std::uint32_t i) override {
    co_await send_preamble(socket, {control::ConnectionKind::data, control::kProtocolVersion, accepted_.test_id, i});
  }
  asio::awaitable<void> await_start() override { control::parse_start(co_await control_->read(kSetUpLimit)); }
  asio::awaitable<void> watch(std::chrono::steady_clock::duration limit) override;
  std::chrono::seconds window_grace() const override { return kWindowGrace; }
  std::string unfinished(const workloads::DirectionLayout& layout) const override {
    return layout.reverse ? "the connections did not finish within the window"
                          : "the senders did not finish within the window";
  }
  void end_window(const workloads::DirectionLayout& layout) override;
  asio::awaitable<std::optional<control::DirectedResults>> exchange(const control::DirectedResults& mine,
                                                                  const workloads::TestSide& side,
                                                                  const spec::TestSpec& spec) override;
  std::string describe(const std::exception& error) const override;

 private:
  asio::awaitable<nlohmann::json> read_before_start(std::chrono::steady_clock::duration limit = kHandshakeLimit);

  const config::Config& config_;
  std::optional<control::ControlChannel> control_;
  tcp::endpoint server_;
  control::TestAccepted accepted_;
  stats::PeerClock clock_;  // how the server's clock relates to this one's
  bool stop_sent_ = false;
};

// The control connection: preamble, hello (and the key's answer), the request, the server's answer.
asio::awaitable<PeerPath> TestioPeer::handshake(const spec::TestSpec& spec, unsigned threads) {
  std::vector<tcp::endpoint> endpoints = co_await lifecycle::resolve(config_);
  net::check_tuning(data_tuning(spec, true, config_.mss), endpoints.front().address().is_v4() ? AF_INET : AF_INET6);
  tcp::socket socket = co_await lifecycle::connect_any(endpoints, config_);
  lifecycle::tune_control_connection(socket, config_);
  server_ = socket.remote_endpoint();
  PeerPath path{{server_}, std::make_unique<tcp::endpoint>(socket.local_endpoint())};
  co_await send_preamble(socket, {control::ConnectionKind::control});
  // The client trusts the server it chose a little more: results carry every interval.
  control_.emplace(std::move(socket), config_.limits.max_result_frame);
  util::log_info("connected to {}", control_->peer());
  const control::ServerHello hello = hello_or_refusal(co_await read_before_start());
  const control::TestRequest request{spec, threads, TESTIO_VERSION, answer_challenge(hello, config_),
                                     config_.max_wait_s};
  const std::uint64_t asked_ns = stats::realtime_ns();
  co_await control_->write(control::to_json(request));
  control_->keep_alive(seconds(config_.stall_timeout_s));
  nlohmann::json answer = co_await read_before_start(kSetUpLimit);
  if (std::optional<std::uint32_t> ahead = control::queued_ahead(answer)) {
    util::log_warn("waiting for the server: {} {} ahead", *ahead, *ahead == 1 ? "test" : "tests");
    // The server answers when a slot frees or the wait is over; the margin is for its word to come.
    answer = co_await read_before_start(seconds(config_.max_wait_s) + kHandshakeLimit);
  }
  const std::uint64_t answered_ns = stats::realtime_ns();
  try {
    accepted_ = control::parse_test_accepted(answer, config_.limits);
  } catch (const control::PeerError& refusal) {
    throw std::runtime_error(std::string("the server refused the test: ") + refusal.what());
  }
  clock_ = clock_of(control_->socket(), asked_ns, accepted_, answered_ns);
  co_return path;
}

// A frame of the handshake; a close before the test started says so, not that it "ended early".
asio::awaitable<nlohmann::json> TestioPeer::read_before_start(std::chrono::steady_clock::duration limit) {
  try {
    co_return co_await control_->read(limit);
  } catch (const std::system_error& error) {
    if (error.code() != asio::error::eof && error.code() != asio::error::connection_reset) throw;
    throw std::runtime_error("the server closed the connection before the test started");
  }
}

// Anything arriving on the control connection while the streams run is the server ending the
// test (an error frame, or a close).
asio::awaitable<void> TestioPeer::watch(std::chrono::steady_clock::duration limit) {
  nlohmann::json message = co_await control_->read(limit);
  control::fail_unexpected(message, "during the test");
}

// The server's senders end their window when told. The write starts on the next turn of this
// thread's loop and is one small frame, done before any later control write.
void TestioPeer::end_window(const workloads::DirectionLayout& layout) {
  if (!layout.reverse || !layout.sends(Side::server, false) || stop_sent_) return;
  stop_sent_ = true;
  asio::co_spawn(control_->socket().get_executor(), control_->write(control::stop_message()), asio::detached);
}

// Our figures go first; the server answers once every stream has reached its end on its side.
asio::awaitable<std::optional<control::DirectedResults>> TestioPeer::exchange(const control::DirectedResults& mine,
                                                                              const workloads::TestSide& side,
                                                                              const spec::TestSpec& spec) {
  const workloads::DirectionLayout layout = side.layout();
  control_->allow_frames_up_to(control::figures_frame_bound(layout.total(), expected_intervals(spec)));
  co_await control_->write(control::to_json(summary_of(mine), side.done_message()));
  co_return control::parse_directed_results(co_await control_->read(kResultsLimit), "results", layout.forward,
                                            layout.reverse);
}

std::string TestioPeer::describe(const std::exception& error) const {
  if (auto* multiple = dynamic_cast<const asio::multiple_exceptions*>(&error)) {
    try {
      std::rethrow_exception(multiple->first_exception());
    } catch (const std::exception& first) {
      return describe(first);
    }
  }
  if (auto* system = dynamic_cast<const std::system_error*>(&error)) {
    if (system->code() == asio::error::eof || system->code() == asio::error::connection_reset)
      return "the server closed the control connection: the test ended early";
    if (system->code() == asio::error::broken_pipe)  // a stopped client woken after the server gave up on it
      return "the server closed the connection: the test ended early";
    return system->code().message();
  }
  if (dynamic_cast<const control::PeerError*>(&error)) return std::string("the server ended the test: ") + error.what();
  return error.what();
}

}  // namespace

std::unique_ptr<lifecycle::ClientPeer> testio_peer(const config::Config& config) { return std::make_unique<TestioPeer>(config); }

}  // namespace testio::control
