// The client's test, top to bottom, whichever peer it runs against: ClientTest::run() is the
// lifecycle, each step a function below it in the order it runs. The peer (one per protocol, in
// src/protocols/) says what differs between protocols; the workload
// (bulk, rr, transfers, udp, http) makes the streams and adds its part of the report. Nothing here
// asks which one runs.
#include "lifecycle/client_lifecycle.hpp"

#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <memory>
#include <optional>

#include <asio/co_spawn.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/signal_set.hpp>

#include "diagnosis/verdict.hpp"
#include "lifecycle/diagnose.hpp"
#include "engines/bulk_streams.hpp"
#include "lifecycle/client_peer.hpp"
#include "lifecycle/client_signals.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/deadline.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/start.hpp"
#include "net/mptcp.hpp"
#include "net/port_spread.hpp"
#include "net/route_lookup.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::lifecycle {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using workloads::Side;

constexpr auto kSenderStopLimit = 5s;  // for streams to stop once the test is being abandoned

// Logs each way one direction's figures fail their check; true when one did.
bool log_failures(const report::TestReport& direction, std::uint32_t first_connection) {
  const char* sender = direction.start.local_is_sender ? "the client" : "the server";
  const char* receiver = direction.start.local_is_sender ? "the server" : "the client";
  bool failed = false;
  for (std::uint32_t stream : direction.mismatched_streams) {
    util::log_error("connection {}: {} sent {} bytes but {} received {}", first_connection + stream + 1, sender,
                  direction.sender.totals[stream].bytes, receiver, direction.receiver.totals[stream].bytes);
    failed = true;
  }
  std::size_t failed_streams = stats::summarize(direction.sender.totals).failed_streams +
                               stats::summarize(direction.receiver.totals).failed_streams;
  if (failed_streams) util::log_error("{} connections ended with an error", failed_streams);
  return failed || failed_streams;
}

// One test against one peer. Owner: the control thread, which runs every step.
class ClientTest {
 public:
  ClientTest(const config::Config& config, ClientPeer& peer, report::Reporter& reporter, Interruption& interruption)
      : config_(config), peer_(peer), reporter_(reporter), interruption_(interruption) {}

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
      ended_because_ = peer_.describe(error);
    }
    co_await wind_down();
    co_return report();
  }

 private:
  void prepare();
  asio::awaitable<void> handshake();
  asio::awaitable<void> open_streams();
  asio::awaitable<void> open_part(TestPart& part, asio::any_io_executor executor);
  asio::awaitable<tcp::socket> open_data_connection(TestPart& part, std::uint32_t i);
  asio::awaitable<void> start();
  asio::awaitable<void> run_streams();
  void end_window();
  asio::awaitable<void> exchange_results();
  asio::awaitable<void> wind_down();
  int report();

  const config::Config& config_;
  ClientPeer& peer_;
  report::Reporter& reporter_;
  Interruption& interruption_;
  std::optional<TestParts> parts_;  // a workload each; its first's start opens the report
  spec::TestSpec spec_;             // as sent: the workloads may complete it (-F: the file's size)
  PeerPath path_;           // where the data connections go: after the first, where it went
  bool multipath_ = false;  // the route to the server has several nexthops: data ports are bound first
  std::optional<net::PortSpreader> spreader_;  // --spread even
  std::uint32_t spread_turn_ = 0;              // sending flows given a spread port so far
  std::string clamp_warning_;
  std::uint32_t mptcp_fell_back_ = 0;  // --mptcp data connections the server answered in plain TCP
  engines::TestClock clock_;  // the window's, from start()
  bool incomplete_ = false;  // the test ended early: the figures cover the time run
  std::string ended_because_;
};

// Everything this side can check before anything connects. -F and --save belong to the first
// workload: the others of a composed test send generated data and keep nothing.
void ClientTest::prepare() {
  spec::TestSpec settled = config_.spec;
  if (std::string why = engines::settle_default_engine(settled); !why.empty())
    util::log_info("this test runs asio, not the default io_uring: {}", why);
  config::Config beside = config_;
  beside.file.clear();
  beside.save_dir.clear();
  parts_.emplace(settled, [&](std::size_t k, spec::TestSpec& spec) {
    std::unique_ptr<workloads::TestSide> side = peer_.make_side(spec);
    return side ? std::move(side) : workloads::of(spec).client(k == 0 ? config_ : beside, spec);
  });
  for (TestPart& part : *parts_) {
    if (std::string reason = engines::unusable_reason(part.spec.engine, part.spec.send_mode == spec::SendMode::zerocopy);
        !reason.empty())
      throw std::runtime_error(reason);
    check_descriptors(part.spec, part.layout, Side::client, part.threads);
  }
  spec_ = parts_->composed_spec();
}

// The peer agrees on the test; a control connection, when there is one, shows the data
// connections' route.
asio::awaitable<void> ClientTest::handshake() {
  path_ = co_await peer_.handshake(spec_, parts_->threads());
  if (!path_.control_local) co_return;
  const tcp::endpoint& server = path_.data.front();
  multipath_ = net::route_nexthops(path_.control_local->data(), server.data()).nexthops.size() > 1;
  if (config_.spread_even) {
    spreader_.emplace(path_.control_local->data(), server.data());
    if (spreader_->devices().empty())
      util::log_warn("--spread even: {}; the flows go where the kernel puts them", spreader_->why_not());
  }
}

// Each workload's streams, dealt round-robin to its workers: on data connections opened here, or
// opening their own once the test runs (transfers, HTTP downloads, UDP flows).
asio::awaitable<void> ClientTest::open_streams() {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  for (TestPart& part : *parts_) co_await open_part(part, executor);
  report::StartInfo& first = parts_->front().start;
  first.spec.with = spec_.with;  // the whole test: a report's start.testio.spec runs it again
  if (spreader_ && spread_turn_) first.spread_asked = spreader_->split(spread_turn_);
  if (!clamp_warning_.empty()) util::log_warn("{}", clamp_warning_);
  if (mptcp_fell_back_)
    util::log_warn("--mptcp: {} of {} data connections fell back to plain TCP: the server does not listen "
                 "for MPTCP (testio -s --mptcp)", mptcp_fell_back_, parts_->connections());
}

asio::awaitable<void> ClientTest::open_part(TestPart& part, asio::any_io_executor executor) {
  part.streams = std::make_unique<TestStreams>(executor, part.layout, part.threads, part.spec.cpus, part.spec);
  part.streams->set_clock_offset(peer_.clock_offset_ns());
  part.streams->number_from(part.first);
  report::StartInfo& start = part.start;
  start = start_info(part.spec, parts_->threads(), 0, /*from_client=*/true);
  start.connecting_host = config_.host;
  start.connecting_port = config_.port;
  start.mss_requested = config_.mss;
  start.cport_first = config_.cport_first ? static_cast<std::uint16_t>(config_.cport_first + part.first) : 0;
  start.cport_last = config_.cport_first ? static_cast<std::uint16_t>(start.cport_first + part.connections() - 1) : 0;
  peer_.describe_start(start);
  for (std::uint32_t i = 0; i < part.connections(); ++i) {
    std::optional<tcp::socket> socket;
    if (part.before_start()) socket = co_await open_data_connection(part, i);
    std::optional<asio::ip::udp::socket> flow = co_await peer_.open_flow(part.first + i);
    const tcp::endpoint server = path_.data.empty() ? tcp::endpoint{} : path_.data.front();
    part.streams->add(*part.side, i, std::move(socket), server, peer_.preamble(part.first + i), peer_.test_id());
    if (flow)
      if (std::string refused = part.streams->route_flow(*part.side, i, std::move(*flow)); !refused.empty())
        util::log_warn("{}", refused);
  }
  part.side->describe_start(start);
  part.streams->start();
}

// Connects data connection `i` of `part` (tuned before connect: the SYN carries the window scale
// and the MSS) and has the peer say which test and stream it belongs to.
asio::awaitable<tcp::socket> ClientTest::open_data_connection(TestPart& part, std::uint32_t i) {
  const bool sending = part.layout.sends_on(Side::client, i);
  const std::uint32_t number = part.first + i;
  auto prepare = [&](tcp::socket& socket) {
    std::string clamped = tune_data_connection(socket.native_handle(), part.spec, sending, config_.mss);
    if (!clamped.empty()) clamp_warning_ = clamped;
  };
  std::uint16_t source_port = config_.cport_first ? static_cast<std::uint16_t>(config_.cport_first + number) : 0;
  const bool spreading = sending && spreader_ && !spreader_->devices().empty();
  std::optional<tcp::socket> connected;
  // A spread port someone else holds is skipped for the next one of the same interface.
  for (int attempt = 0; !connected; ++attempt) {
    if (spreading && !(source_port = spreader_->port_for(spread_turn_)))
      throw std::runtime_error("--spread even: the ephemeral port range has no free port left for " +
                               spreader_->devices()[spread_turn_ % spreader_->devices().size()]);
    // Named, not a temporary in the co_await: GCC 12 destroys such a temporary twice.
    const DataConnectionOptions options{prepare, source_port, multipath_, config_.mptcp, config_.flow_label};
    try {
      connected = co_await connect_any(path_.data, config_, options);
    } catch (const SourcePortBusy&) {
      if (!spreading || attempt >= 64) throw;
    }
  }
  if (spreading) ++spread_turn_;
  tcp::socket socket = std::move(*connected);
  if (config_.mptcp && net::mptcp_subflows(socket.native_handle()) == 0) ++mptcp_fell_back_;
  asio::error_code gone;
  const tcp::endpoint server = socket.remote_endpoint(gone);
  if (gone)  // a server closing a connection in its handshake answers with a reset
    throw std::runtime_error("the server closed data connection " + std::to_string(number) +
                             " as soon as it opened (" + gone.message() + ")");
  // The later connections go where the first one went.
  if (path_.data.size() > 1) path_.data = {server};
  if (part.start.peer.empty()) part.start.peer = endpoint_text(server);
  co_await peer_.introduce(socket, number);
  note_connection(part.start, socket.native_handle());
  co_return socket;
}

// The peer says start once it holds every stream; the window opens now, for every workload.
asio::awaitable<void> ClientTest::start() {
  co_await peer_.await_start();
  clock_ = engines::TestClock::starting_now(spec_);
  const auto timestamp = static_cast<std::int64_t>(std::time(nullptr));
  for (TestPart& part : *parts_) part.start.timestamp = timestamp;
  TestPart& first = parts_->front();
  parts_->show_live(reporter_, Side::client);
  parts_->begin(clock_);
  const bool live_forward = first.layout.live_forward();
  reporter_.start(direction_start(first.start, first.layout.connections(live_forward),
                                  first.layout.sends(Side::client, live_forward)));
  util::log_info("test started: {} connections over {} threads", parts_->connections(), parts_->threads());
}

// Until the window is over, as the peer tells it (by default: every stream has ended), while
// intervals tick, unless the peer ends the test first.
asio::awaitable<void> ClientTest::run_streams() {
  interruption_.end_window = [this] { end_window(); };
  interruption_.window_opened = true;
  const auto limit = engines::run_limit(spec_, peer_.window_grace());
  auto outcome =
      co_await (peer_.run_window(*parts_, clock_, limit) || capture(peer_.watch(limit)) || parts_->sample());
  interruption_.end_window = nullptr;
  if (outcome.index() == 1 && std::get<1>(outcome).error) std::rethrow_exception(std::get<1>(outcome).error);
  if (outcome.index() == 0 && std::get<0>(outcome)) co_return;
  for (const TestPart& part : *parts_)
    if (part.streams->remaining())
      if (std::string why = peer_.unfinished(part.layout); !why.empty()) throw std::runtime_error(why);
  // The workload's failure() tells which of its streams did not finish: they stop here, counted.
  parts_->end_window();
  co_await parts_->all_done(kSenderStopLimit);
}

// SIGINT: this side's streams end their window, and the peer's senders when they can be told.
void ClientTest::end_window() {
  parts_->end_window();
  for (const TestPart& part : *parts_) peer_.end_window(part.layout);
}

// The peer hears the test ended; our figures go to it, and its come back: one exchange per
// workload, in order.
asio::awaitable<void> ClientTest::exchange_results() {
  co_await peer_.conclude(*parts_);
  for (TestPart& part : *parts_) part.mine = part.streams->measurement().finish(Side::client);
  for (TestPart& part : *parts_) part.theirs = co_await peer_.exchange(*part.mine, *part.side, part.spec);
}

// Stops the streams. After a failure (the peer vanished, a stream stalled) they may still be
// writing: they end their window first and what they counted is kept.
asio::awaitable<void> ClientTest::wind_down() {
  interruption_.end_window = nullptr;
  if (incomplete_) {
    parts_->end_window();
    co_await parts_->all_done(kSenderStopLimit);
    for (TestPart& part : *parts_)
      if (!part.mine) part.mine = part.streams->measurement().finish(Side::client);
    util::log_error("{}", ended_because_);
  } else if (interruption_.signal) {
    incomplete_ = true;
    ended_because_ = interruption_text(interruption_.signal);
    util::log_warn("{}: the figures cover the time run", ended_because_);
  }
  parts_->stop();
}

// One report per workload and direction, the sender's figures beside the receiver's, and the
// exit code.
int ClientTest::report() {
  std::vector<report::TestReport> reports;
  bool failed = false;
  for (TestPart& part : *parts_) {
    report::TestReport live =
        peer_.side_by_side(part.start, part.layout, std::move(*part.mine), std::move(part.theirs));
    if (!incomplete_) {
      failed = log_failures(live, part.first) || failed;
      if (live.bidir_reverse) failed = log_failures(*live.bidir_reverse, part.first + part.layout.forward) || failed;
    }
    live.incomplete = incomplete_;
    live.ended_because = ended_because_;
    part.side->add_to_report(live);
    reports.push_back(std::move(live));
  }
  report::TestReport whole = TestParts::joined(std::move(reports));
  whole.diagnosis = diagnosis::diagnose(whole);
  reporter_.end(whole);
  if (incomplete_) return 1;
  for (std::size_t k = 0; k < parts_->size(); ++k)
    if (std::string why = (*parts_)[k].side->failure(k == 0 ? whole : whole.with[k - 1]); !why.empty()) {
      util::log_error("{}", why);
      failed = true;
    }
  return failed ? 1 : 0;
}

}  // namespace

int run_client(const config::Config& config, report::Reporter& reporter, const PeerMaker& make_peer) {
  if (config.diagnose) return run_client_diagnosed(config, reporter, make_peer);
  // The peer lives in the test's frame: its sockets go before the io_context that runs them.
  auto test = [&](Interruption& interruption) -> asio::awaitable<int> {
    std::unique_ptr<ClientPeer> peer = make_peer();
    try {
      ClientTest client(config, *peer, peer->reporter(reporter), interruption);
      co_return co_await client.run();
    } catch (const std::exception& error) {
      throw std::runtime_error(peer->describe(error));
    }
  };
  return run_client_test(test, reporter, [](const std::exception& error) { return std::string(error.what()); });
}

std::string interruption_text(int signal) {
  return signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM";
}

int run_client_test(const ClientRun& test, report::Reporter& reporter, const DescribeFailure& describe) {
  asio::io_context io(1);
  int exit_code = 1;
  Interruption interruption;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const asio::error_code&, int)> on_signal = [&](const asio::error_code& error, int signal) {
    if (error) return;
    if (interruption.signal == 0 && interruption.end_window) {
      interruption.signal = signal;
      util::log_warn("{}: ending the test early", signal == SIGINT ? "SIGINT" : "SIGTERM");
      interruption.end_window();
      signals.async_wait(on_signal);
      return;
    }
    // Outside the window (before it opens, after it, or a second signal) the test stops at once;
    // a --json reader still gets a document that says why, as iperf3's does.
    const char* when = interruption.signal          ? " again: stopped"
                       : interruption.window_opened ? " after the window: stopped"
                                                    : " before the test started: stopped";
    const std::string stopped = interruption_text(signal) + when;
    util::log_error("{}", stopped);
    reporter.error(stopped);
    exit_code = 1;
    io.stop();
  };
  signals.async_wait(on_signal);
  asio::co_spawn(io, test(interruption), [&](std::exception_ptr failure, int code) {
    signals.cancel();
    if (!failure) {
      exit_code = code;
      return;
    }
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      std::string message = describe(error);
      util::log_error("{}", message);
      reporter.error(message);
    }
  });
  io.run();
  return exit_code;
}

}  // namespace testio::lifecycle
