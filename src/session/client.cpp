// The client's test, top to bottom: ClientTest::run() is the lifecycle, each step a function below
// it in the order it runs. The workload (bulk, rr, transfers) only makes the streams and adds its
// part of the report; nothing here asks which one runs.
#include "session/client.hpp"

#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <memory>
#include <optional>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/write.hpp>
#include <nlohmann/json.hpp>

#include "control/auth.hpp"
#include "control/channel.hpp"
#include "control/protocol.hpp"
#include "engines/bulk_streams.hpp"
#include "net/port_spread.hpp"
#include "net/route_lookup.hpp"
#include "session/client_signals.hpp"
#include "session/connect.hpp"
#include "session/test_start.hpp"
#include "session/test_streams.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::session {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using workloads::Side;

constexpr auto kHandshakeLimit = 10s;
constexpr auto kResultsLimit = 60s;     // receivers drain what is still in flight, then answer
constexpr auto kWindowGrace = 30s;      // beyond -O + -t before the client gives up on its streams
constexpr auto kSenderStopLimit = 5s;   // for streams to stop once the test is being abandoned

asio::awaitable<void> send_preamble(tcp::socket& socket, const control::Preamble& preamble) {
  control::PreambleBytes bytes = control::encode_preamble(preamble);
  co_await control::within(asio::async_write(socket, asio::buffer(bytes), asio::use_awaitable), kHandshakeLimit,
                           "sending the connection preamble");
}

// The answer to the server's challenge, when it sets one.
std::string answer_challenge(const control::ServerHello& hello, const config::Config& config) {
  if (hello.auth != "hmac-sha256") {
    if (!config.psk_file.empty()) spdlog::warn("the server does not ask for a key: --psk-file is unused");
    return {};
  }
  if (config.psk_file.empty()) throw std::runtime_error("the server requires a pre-shared key: give it with --psk-file");
  bool readable_by_others = false;
  std::string key = control::load_psk(config.psk_file, readable_by_others);
  if (readable_by_others) spdlog::warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
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
    return kept;
  };
  control::DirectedResults summarized;
  summarized.forward = summary(results.forward);
  if (results.reverse) summarized.reverse = summary(*results.reverse);
  return summarized;
}

std::string describe(const std::exception& error) {
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
    return system->code().message();
  }
  if (dynamic_cast<const control::PeerError*>(&error)) return std::string("the server ended the test: ") + error.what();
  return error.what();
}

// Logs each way one direction's figures fail their check; true when one did.
bool log_failures(const report::TestReport& direction, std::uint32_t first_connection) {
  const char* sender = direction.start.local_is_sender ? "the client" : "the server";
  const char* receiver = direction.start.local_is_sender ? "the server" : "the client";
  bool failed = false;
  for (std::uint32_t stream : direction.mismatched_streams) {
    spdlog::error("connection {}: {} sent {} bytes but {} received {}", first_connection + stream + 1, sender,
                  direction.sender.totals[stream].bytes, receiver, direction.receiver.totals[stream].bytes);
    failed = true;
  }
  std::size_t failed_streams = stats::summarize(direction.sender.totals).failed_streams +
                               stats::summarize(direction.receiver.totals).failed_streams;
  if (failed_streams) spdlog::error("{} connections ended with an error", failed_streams);
  return failed || failed_streams;
}

// One test against a testio server. Owner: the control thread, which runs every step.
class ClientTest {
 public:
  ClientTest(const config::Config& config, report::Reporter& reporter, Interruption& interruption)
      : config_(config),
        reporter_(reporter),
        interruption_(interruption),
        spec_(config.spec),
        workload_(workloads::of(spec_)) {}

  asio::awaitable<int> run() {
    prepare();
    co_await handshake();
    co_await open_streams();
    co_await start();
    // From here on a failure still reports what this side measured, marked incomplete.
    try {
      co_await run_streams();
      co_await exchange_results();
    } catch (const std::exception& error) {
      incomplete_ = true;
      ended_because_ = describe(error);
    }
    co_await wind_down();
    co_return report();
  }

 private:
  void prepare();
  asio::awaitable<void> handshake();
  asio::awaitable<nlohmann::json> read_before_start();
  asio::awaitable<void> open_streams();
  asio::awaitable<tcp::socket> open_data_connection(std::uint32_t i);
  asio::awaitable<void> start();
  asio::awaitable<void> run_streams();
  void end_window();
  asio::awaitable<void> exchange_results();
  asio::awaitable<void> wind_down();
  int report();

  const config::Config& config_;
  report::Reporter& reporter_;
  Interruption& interruption_;
  spec::TestSpec spec_;  // as sent: the workload may complete it (-F: the file's size)
  const workloads::Workload& workload_;
  std::unique_ptr<workloads::TestSide> side_;
  workloads::DirectionLayout layout_;
  unsigned threads_ = 1;
  std::optional<control::ControlChannel> control_;
  tcp::endpoint server_;
  bool multipath_ = false;  // the route to the server has several nexthops: data ports are bound first
  std::optional<net::PortSpreader> spreader_;  // --spread even
  std::uint32_t spread_turn_ = 0;              // sending flows given a spread port so far
  control::TestAccepted accepted_;
  std::optional<TestStreams> streams_;
  stats::PeerClock clock_;  // how the server's clock relates to this one's
  report::StartInfo start_;
  std::string clamp_warning_;
  bool stop_sent_ = false;
  bool incomplete_ = false;  // the test ended early: the figures cover the time run
  std::string ended_because_;
  std::optional<control::DirectedResults> mine_, theirs_;
};

// Everything this side can check before anything connects.
void ClientTest::prepare() {
  side_ = workload_.client(config_, spec_);
  layout_ = side_->layout();
  if (std::string reason = engines::unusable_reason(spec_.engine, spec_.send_mode == spec::SendMode::zerocopy);
      !reason.empty())
    throw std::runtime_error(reason);
  threads_ = spec::worker_threads(spec_.engine, spec_.threads, layout_.total());
  check_descriptors(spec_, layout_, Side::client, threads_);
}

// The control connection: preamble, hello (and the key's answer), the request, the server's answer.
asio::awaitable<void> ClientTest::handshake() {
  std::vector<tcp::endpoint> endpoints = co_await resolve(config_);
  net::check_tuning(data_tuning(spec_, true, config_.mss), endpoints.front().address().is_v4() ? AF_INET : AF_INET6);
  tcp::socket socket = co_await connect_any(endpoints, config_);
  server_ = socket.remote_endpoint();
  multipath_ = net::route_nexthops(socket.local_endpoint().data(), server_.data()).nexthops.size() > 1;
  if (config_.spread_even) {
    spreader_.emplace(socket.local_endpoint().data(), server_.data());
    if (spreader_->devices().empty())
      spdlog::warn("--spread even: {}; the flows go where the kernel puts them", spreader_->why_not());
  }
  const control::Preamble preamble{control::ConnectionKind::control};
  co_await send_preamble(socket, preamble);
  // The client trusts the server it chose a little more: results carry every interval.
  control_.emplace(std::move(socket), config_.limits.max_result_frame);
  spdlog::info("connected to {}", control_->peer());
  const control::ServerHello hello = hello_or_refusal(co_await read_before_start());
  const control::TestRequest request{spec_, threads_, TESTIO_VERSION, answer_challenge(hello, config_)};
  const std::uint64_t asked_ns = stats::realtime_ns();
  co_await control_->write(control::to_json(request));
  nlohmann::json answer = co_await read_before_start();
  const std::uint64_t answered_ns = stats::realtime_ns();
  try {
    accepted_ = control::parse_test_accepted(answer, config_.limits);
  } catch (const control::PeerError& refusal) {
    throw std::runtime_error(std::string("the server refused the test: ") + refusal.what());
  }
  clock_ = clock_of(control_->socket(), asked_ns, accepted_, answered_ns);
}

// A frame of the handshake; a close before the test started says so, not that it "ended early".
asio::awaitable<nlohmann::json> ClientTest::read_before_start() {
  try {
    co_return co_await control_->read(kHandshakeLimit);
  } catch (const std::system_error& error) {
    if (error.code() != asio::error::eof && error.code() != asio::error::connection_reset) throw;
    throw std::runtime_error("the server closed the connection before the test started");
  }
}

// The workload's streams, dealt round-robin to the workers: on data connections opened here, or
// opening their own once the test runs (transfers).
asio::awaitable<void> ClientTest::open_streams() {
  streams_.emplace(co_await asio::this_coro::executor, layout_, threads_, spec_.cpus, spec_);
  streams_->set_clock_offset(clock_.offset_ns);
  start_ = start_info(spec_, threads_, accepted_.server_threads, /*from_client=*/true);
  start_.peer_clock = clock_;
  start_.peer = control::endpoint_text(server_);
  start_.connecting_host = config_.host;
  start_.connecting_port = config_.port;
  start_.mss_requested = config_.mss;
  start_.server_cpus = accepted_.server_cpus;
  start_.cport_first = config_.cport_first;
  start_.cport_last = config_.cport_first ? static_cast<std::uint16_t>(config_.cport_first + layout_.total() - 1) : 0;
  const bool before_start = side_->connections() == workloads::Connections::before_start;
  for (std::uint32_t i = 0; i < layout_.total(); ++i) {
    std::optional<tcp::socket> socket;
    if (before_start) socket = co_await open_data_connection(i);
    const control::Preamble slot{control::ConnectionKind::data, control::kProtocolVersion, accepted_.test_id, i};
    streams_->add(*side_, i, std::move(socket), server_, control::encode_preamble(slot), accepted_.test_id);
  }
  if (spreader_ && spread_turn_) start_.spread_asked = spreader_->split(spread_turn_);
  side_->describe_start(start_);
  if (!clamp_warning_.empty()) spdlog::warn("{}", clamp_warning_);
  streams_->start();
}

// Connects data connection `i` (tuned before connect: the SYN carries the window scale and the
// MSS) and says which test and stream it belongs to.
asio::awaitable<tcp::socket> ClientTest::open_data_connection(std::uint32_t i) {
  const bool sending = layout_.sends_on(Side::client, i);
  auto prepare = [&](tcp::socket& socket) {
    std::string clamped = tune_data_connection(socket.native_handle(), spec_, sending, config_.mss);
    if (!clamped.empty()) clamp_warning_ = clamped;
  };
  const std::vector<tcp::endpoint> server_only{server_};
  std::uint16_t source_port = config_.cport_first ? static_cast<std::uint16_t>(config_.cport_first + i) : 0;
  const bool spreading = sending && spreader_ && !spreader_->devices().empty();
  std::optional<tcp::socket> connected;
  // A spread port someone else holds is skipped for the next one of the same interface.
  for (int attempt = 0; !connected; ++attempt) {
    if (spreading && !(source_port = spreader_->port_for(spread_turn_)))
      throw std::runtime_error("--spread even: the ephemeral port range has no free port left for " +
                               spreader_->devices()[spread_turn_ % spreader_->devices().size()]);
    try {
      connected = co_await connect_any(server_only, config_, prepare, source_port, multipath_);
    } catch (const SourcePortBusy&) {
      if (!spreading || attempt >= 64) throw;
    }
  }
  if (spreading) ++spread_turn_;
  tcp::socket socket = std::move(*connected);
  const control::Preamble preamble{control::ConnectionKind::data, control::kProtocolVersion, accepted_.test_id, i};
  co_await send_preamble(socket, preamble);
  note_connection(start_, socket);
  co_return socket;
}

// The server says start once it holds every stream; the window opens now.
asio::awaitable<void> ClientTest::start() {
  control::parse_start(co_await control_->read(kHandshakeLimit));
  const engines::TestClock clock = engines::TestClock::starting_now(spec_);
  start_.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  streams_->measurement().show_live(reporter_);
  streams_->begin(clock);
  const bool live_forward = layout_.live_forward();
  reporter_.start(direction_start(start_, layout_.connections(live_forward), layout_.sends(Side::client, live_forward)));
  spdlog::info("test started: {} connections over {} threads", layout_.total(), threads_);
}

// Until every stream has ended (senders their window, then a half-close; receivers at the peer's
// half-close; transfer slots once the count is taken) while intervals tick. Anything arriving on
// the control connection meanwhile is the server ending the test (an error frame, or a close).
asio::awaitable<void> ClientTest::run_streams() {
  interruption_.end_window = [this] { end_window(); };
  const auto limit = engines::run_limit(spec_, kWindowGrace);
  auto outcome = co_await (streams_->all_done(limit) || control::capture(control_->read(limit)) ||
                           streams_->measurement().sample());
  interruption_.end_window = nullptr;
  if (outcome.index() == 1) {
    auto& message = std::get<1>(outcome);
    if (message.error) std::rethrow_exception(message.error);
    control::fail_unexpected(*message.value, "during the test");
  }
  if (outcome.index() != 0 || !std::get<0>(outcome))
    throw std::runtime_error(layout_.reverse ? "the connections did not finish within the window"
                                             : "the senders did not finish within the window");
}

// SIGINT: this side's streams end their window; the server's senders end theirs when told. The
// write starts on the next turn of this thread's loop and is one small frame, done before any
// later control write.
void ClientTest::end_window() {
  streams_->end_window();
  if (layout_.reverse && layout_.sends(Side::server, false) && !stop_sent_) {
    stop_sent_ = true;
    asio::co_spawn(control_->socket().get_executor(), control_->write(control::stop_message()), asio::detached);
  }
}

// The intervals the server's figures may carry: the window's at -i, or an hour's for a counted test.
std::uint64_t expected_intervals(const spec::TestSpec& spec) {
  constexpr double kCountedSeconds = 3600;
  const double seconds = spec.timed() ? spec.window_s() : kCountedSeconds;
  return (spec.interval_s > 0 ? static_cast<std::uint64_t>(seconds / spec.interval_s) : 0) + 3;
}

// Our figures go first; the server answers once every stream has reached its end on its side.
asio::awaitable<void> ClientTest::exchange_results() {
  control_->allow_frames_up_to(control::figures_frame_bound(layout_.total(), expected_intervals(spec_)));
  mine_ = streams_->measurement().finish(Side::client);
  co_await control_->write(control::to_json(summary_of(*mine_), side_->done_message()));
  theirs_ = control::parse_directed_results(co_await control_->read(kResultsLimit), "results", layout_.forward,
                                            layout_.reverse);
}

// Stops the streams. After a failure (the server vanished, a stream stalled) they may still be
// writing: they end their window first and what they counted is kept.
asio::awaitable<void> ClientTest::wind_down() {
  interruption_.end_window = nullptr;
  if (incomplete_) {
    streams_->end_window();
    co_await streams_->all_done(kSenderStopLimit);
    if (!mine_) mine_ = streams_->measurement().finish(Side::client);
    spdlog::error("{}", ended_because_);
  } else if (interruption_.signal) {
    incomplete_ = true;
    ended_because_ = std::string("interrupted by ") + (interruption_.signal == SIGINT ? "SIGINT" : "SIGTERM");
    spdlog::warn("{}: the figures cover the time run", ended_because_);
  }
  streams_->stop();
}

// One report per direction, the sender's figures beside the receiver's, and the exit code.
int ClientTest::report() {
  report::TestReport live = side_by_side(start_, layout_, Side::client, std::move(*mine_), std::move(theirs_));
  bool failed = false;
  if (!incomplete_) {
    failed = log_failures(live, 0);
    if (live.bidir_reverse) failed = log_failures(*live.bidir_reverse, layout_.forward) || failed;
  }
  live.incomplete = incomplete_;
  live.ended_because = ended_because_;
  side_->add_to_report(live);
  reporter_.end(live);
  if (incomplete_) return 1;
  if (std::string why = side_->failure(live); !why.empty()) {
    spdlog::error("{}", why);
    failed = true;
  }
  return failed ? 1 : 0;
}

}  // namespace

int run_client(const config::Config& config, report::Reporter& reporter) {
  auto test = [&](Interruption& interruption) -> asio::awaitable<int> {
    ClientTest client(config, reporter, interruption);
    co_return co_await client.run();
  };
  return run_client_test(test, reporter, describe);
}

}  // namespace testio::session
