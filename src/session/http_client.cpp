// The lifecycle of HTTP downloads: the http workload's client side, its slots over TestStreams
// (each worker drives its slots' transfers with its own libcurl multi handle), intervals while
// they run, and one report of this side's figures with the workload's part.
#include "session/http_client.hpp"

#include <chrono>
#include <csignal>
#include <ctime>

#include <asio/experimental/awaitable_operators.hpp>

#include "session/client_signals.hpp"
#include "session/directions.hpp"
#include "session/test_start.hpp"
#include "session/test_streams.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::session {
namespace {

using namespace asio::experimental::awaitable_operators;
using workloads::Side;

asio::awaitable<int> download(const config::Config& config, report::Reporter& reporter, Interruption& interruption) {
  spec::TestSpec spec = config.spec;
  std::unique_ptr<workloads::TestSide> side = workloads::of(spec).client(config, spec);
  const workloads::DirectionLayout layout = side->layout();
  const unsigned threads = spec::worker_threads(spec::Engine::asio, spec.threads, layout.total());
  check_descriptors(spec, layout, Side::client, threads);
  TestStreams streams(co_await asio::this_coro::executor, layout, threads, spec.cpus, spec);
  for (std::uint32_t i = 0; i < layout.total(); ++i) streams.add(*side, i, std::nullopt);
  report::StartInfo start = start_info(spec, threads, 0, /*from_client=*/true);
  start.peer = config.urls.size() == 1 ? config.urls.front() : std::to_string(config.urls.size()) + " URLs";
  start.plain_peer = true;
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  streams.start();
  streams.measurement().show_live(reporter);
  reporter.start(direction_start(start, layout.connections(true), /*local_sends=*/false));
  streams.begin(engines::TestClock::starting_now(spec));
  spdlog::info("{} downloads, {} at a time on {} threads", spec.transfers.count, layout.total(), threads);
  interruption.end_window = [&streams] { streams.end_window(); };
  // Each transfer is bounded by --max-time; the run as a whole by the counted test's limit.
  auto outcome = co_await (streams.all_done(engines::run_limit(spec, std::chrono::seconds(1))) ||
                           streams.measurement().sample());
  interruption.end_window = nullptr;
  const bool finished = outcome.index() == 0 && std::get<0>(outcome);
  if (!finished) streams.end_window();
  control::DirectedResults mine = streams.measurement().finish(Side::client);
  streams.stop();
  report::TestReport report = side_by_side(start, layout, Side::client, std::move(mine), std::nullopt);
  side->add_to_report(report);
  const std::string failure = side->failure(report);
  if (interruption.signal) {
    report.incomplete = true;
    report.ended_because = interruption.signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM";
  }
  reporter.end(report);
  if (!failure.empty()) spdlog::error("{}", failure);
  co_return failure.empty() && !interruption.signal ? 0 : 1;
}

}  // namespace

int run_http_client(const config::Config& config, report::Reporter& reporter) {
  auto test = [&](Interruption& interruption) { return download(config, reporter, interruption); };
  return run_client_test(test, reporter, [](const std::exception& error) { return std::string(error.what()); });
}

}  // namespace testio::session
