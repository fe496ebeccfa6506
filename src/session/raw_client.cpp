// `testio -c HOST --raw [N]`: N plain TCP connections to any receiver (nc, socat, a script, a
// testio raw sink), each carrying generated data for the window or its share of -n / -F; and
// `--rr --raw` against any echo server. No control connection: what this side measured is the
// report. The streams are the bulk (or rr) workload's, run through TestStreams as any test's are.
#include "session/raw.hpp"

#include <chrono>
#include <csignal>
#include <ctime>
#include <memory>
#include <optional>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/use_awaitable.hpp>

#include "control/channel.hpp"
#include "report/raw_report.hpp"
#include "report/rr_report.hpp"
#include "session/client_signals.hpp"
#include "session/connect.hpp"
#include "session/directions.hpp"
#include "session/test_start.hpp"
#include "session/test_streams.hpp"
#include "util/log.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/rr/rr.hpp"

namespace testio::session {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using workloads::Side;

// Beyond the window: for the receivers to read what is in flight and close (each sender waits
// up to 30 s for its peer's close, engines/asio_bulk.cpp), and a little more.
constexpr auto kPeerCloseGrace = 40s;

// One raw send. Owner: the control thread, which runs every step; the streams belong to workers.
class RawSend {
 public:
  RawSend(const config::Config& config, report::Reporter& reporter, Interruption& interruption, std::ostream& out)
      : config_(config), reporter_(reporter), interruption_(interruption), out_(out), spec_(config.spec) {}

  asio::awaitable<int> run() {
    prepare();
    co_await open_connections();
    const bool finished = co_await run_streams();
    co_return report(finished);
  }

 private:
  void prepare();
  asio::awaitable<void> open_connections();
  asio::awaitable<bool> run_streams();
  int report(bool finished);
  int print_one_line(const control::SideResults& sent, bool finished);

  const config::Config& config_;
  report::Reporter& reporter_;
  Interruption& interruption_;
  std::ostream& out_;
  spec::TestSpec spec_;  // -F completes it with the file's size
  std::unique_ptr<workloads::TestSide> side_;
  workloads::DirectionLayout layout_;
  unsigned threads_ = 1;
  bool one_line_ = false;  // one connection without -i: the line a raw sink prints, as before
  std::optional<TestStreams> streams_;
  report::StartInfo start_;
};

void RawSend::prepare() {
  workloads::bulk::Options plain;
  plain.peer_is_plain = true;
  side_ = workloads::bulk::make_client_side(config_, spec_, plain);
  layout_ = side_->layout();
  threads_ = spec::worker_threads(spec::Engine::asio, spec_.threads, layout_.total());
  check_descriptors(spec_, layout_, Side::client, threads_);
  one_line_ = layout_.total() == 1 && spec_.interval_s <= 0;
}

// Every connection to the address the first one reached, tuned before it connects.
asio::awaitable<void> RawSend::open_connections() {
  std::vector<tcp::endpoint> endpoints = co_await resolve(config_);
  net::check_tuning(data_tuning(spec_, true, config_.mss), endpoints.front().address().is_v4() ? AF_INET : AF_INET6);
  streams_.emplace(co_await asio::this_coro::executor, layout_, threads_, spec_.cpus, spec_);
  start_ = start_info(spec_, threads_, 0, /*from_client=*/true);
  start_.connecting_host = config_.host;
  start_.connecting_port = config_.port;
  start_.mss_requested = config_.mss;
  start_.plain_peer = true;
  std::string clamp_warning;
  auto tune = [&](tcp::socket& socket) {
    std::string clamped = tune_data_connection(socket.native_handle(), spec_, true, config_.mss);
    if (!clamped.empty()) clamp_warning = clamped;
  };
  for (std::uint32_t i = 0; i < layout_.total(); ++i) {
    tcp::socket socket = co_await connect_any(endpoints, config_, tune);
    if (i == 0) {
      endpoints = {socket.remote_endpoint()};
      start_.peer = control::endpoint_text(endpoints.front());
    }
    note_connection(start_, socket);
    streams_->add(*side_, i, std::move(socket));
  }
  side_->describe_start(start_);
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  streams_->start();
}

// Until every sender has sent its part and its receiver has closed, while intervals tick.
asio::awaitable<bool> RawSend::run_streams() {
  const engines::TestClock clock = engines::TestClock::starting_now(spec_);
  start_.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  if (!one_line_) {
    streams_->measurement().show_live(reporter_);
    reporter_.start(direction_start(start_, layout_.connections(true), true));
  }
  streams_->begin(clock);
  spdlog::info("sending over {} connections to {} ({} threads)", layout_.total(), start_.peer, threads_);
  interruption_.end_window = [this] { streams_->end_window(); };
  const auto limit = engines::run_limit(spec_, kPeerCloseGrace);
  auto outcome = co_await (streams_->all_done(limit) || streams_->measurement().sample());
  interruption_.end_window = nullptr;
  co_return outcome.index() == 0 && std::get<0>(outcome);
}

// The report of what was sent; the exit code says whether every connection ended cleanly.
int RawSend::report(bool finished) {
  if (!finished) streams_->end_window();
  control::DirectedResults mine = streams_->measurement().finish(Side::client);
  streams_->stop();
  if (one_line_) return print_one_line(mine.forward, finished);
  report::TestReport sent = side_by_side(start_, layout_, Side::client, std::move(mine), std::nullopt);
  const std::size_t failed = stats::summarize(sent.sender.totals).failed_streams;
  if (interruption_.signal || !finished) {
    sent.incomplete = true;
    sent.ended_because = !interruption_.signal        ? "the receiver did not close within the window"
                         : interruption_.signal == SIGINT ? "interrupted by SIGINT"
                                                          : "interrupted by SIGTERM";
  }
  reporter_.end(sent);
  if (!finished) spdlog::error("the receiver did not read everything and close within the window");
  if (failed) spdlog::error("{} connections ended with an error", failed);
  return finished && !failed && !interruption_.signal ? 0 : 1;
}

// The line a raw sink prints for a connection, from the sending end.
int RawSend::print_one_line(const control::SideResults& sent, bool finished) {
  report::RawTransfer transfer;
  transfer.role = "sent";
  transfer.peer = start_.peer;
  transfer.bytes = sent.streams.front().bytes;
  transfer.calls = sent.streams.front().calls;
  transfer.elapsed_s = sent.wall_s;
  transfer.hash = std::string(util::to_string(spec_.hash));
  if (!sent.digests.empty()) transfer.digest = sent.digests.front();
  if (sent.streams.front().failed || !finished) transfer.error = "the connection ended before the receiver closed it";
  report::print_raw_transfer(out_, transfer, config_.output, config_.unit);
  if (!transfer.error.empty()) spdlog::error("raw send failed: {}", transfer.error);
  return transfer.error.empty() && !interruption_.signal ? 0 : 1;
}

// --rr --raw: the rr workload's client streams, against any plain echo server.
asio::awaitable<int> run_raw_rr(const config::Config& config, std::ostream& out) {
  const spec::TestSpec& spec = config.spec;
  std::vector<tcp::endpoint> endpoints = co_await resolve(config);
  std::unique_ptr<workloads::TestSide> side = workloads::rr::client_side(spec);
  TestStreams streams(co_await asio::this_coro::executor, side->layout(),
                      spec::effective_threads(spec.threads, spec.connections), {}, spec);
  std::string peer;
  for (std::uint32_t i = 0; i < spec.connections; ++i) {
    tcp::socket socket = co_await connect_any(endpoints, config);
    peer = control::endpoint_text(socket.remote_endpoint());
    streams.add(*side, i, std::move(socket));
  }
  streams.start();
  streams.begin(engines::TestClock::starting_now(spec));
  const bool finished = co_await streams.all_done(engines::run_limit(spec, 30s));
  streams.stop();
  std::size_t failed = 0;
  for (std::uint32_t i = 0; i < spec.connections; ++i)
    if (streams.measurement().counters(i).failed.load(std::memory_order_relaxed)) ++failed;
  report::TestReport report;
  side->add_to_report(report);
  report::print_rr(out, report.rr, peer, config.output);
  if (!finished) spdlog::error("the echo server did not answer every request within the window");
  if (failed) spdlog::error("{} connections ended with an error", failed);
  co_return finished && !failed ? 0 : 1;
}

std::string describe(const std::exception& error) {
  if (auto* system = dynamic_cast<const std::system_error*>(&error))
    return "raw send failed: " + system->code().message();
  return error.what();
}

}  // namespace

int run_raw_client(const config::Config& config, report::Reporter& reporter, std::ostream& out) {
  auto test = [&](Interruption& interruption) -> asio::awaitable<int> {
    if (config.spec.is("rr")) co_return co_await run_raw_rr(config, out);
    RawSend send(config, reporter, interruption, out);
    co_return co_await send.run();
  };
  return run_client_test(test, reporter, describe);
}

}  // namespace testio::session
