#include "engine/run_server.hpp"

#include <chrono>
#include <iostream>

#include <spdlog/spdlog.h>

#include "engine/worker_pool.hpp"
#include "net/socket_options.hpp"
#include "report/text_reporter.hpp"
#include "workloads/tcp_stream.hpp"

namespace testio::engine {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr auto kArrivalLimit = 10s;    // for all data connections after test_accepted
constexpr auto kWindowGrace = 60s;     // beyond -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;      // from sender_done to EOF on every stream

std::chrono::steady_clock::duration sender_done_limit(const control::TestRequest& request) {
  // A byte-count test has no window to bound it; a vanished client still ends it, since its
  // control connection closes.
  if (request.total_bytes) return std::chrono::hours(24 * 365);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(request.duration_s)) + kWindowGrace;
}

}  // namespace

ServerTest::ServerTest(asio::any_io_executor executor, std::uint64_t id,
                       const control::TestRequest& request)
    : id_(id),
      request_(request),
      sockets_(request.connections),
      all_arrived_(std::make_shared<CompletionLatch>(executor, request.connections)) {}

std::string ServerTest::attach(std::uint32_t index, tcp::socket socket) {
  if (!gathering_) return "the test has already started";
  if (index >= sockets_.size())
    return "stream " + std::to_string(index) + " is beyond the test's " +
           std::to_string(sockets_.size()) + " connections";
  if (sockets_[index]) return "stream " + std::to_string(index) + " arrived twice";
  sockets_[index].emplace(std::move(socket));
  all_arrived_->count_down();
  return {};
}

asio::awaitable<bool> run_server_test(control::ControlChannel& control, ServerTest& test,
                                      const config::Config& config) {
  const control::TestRequest& request = test.request();
  const std::uint32_t connections = request.connections;
  const unsigned threads = config::effective_threads(request.threads, connections);

  // 1. Accept, then wait for every data connection.
  control::TestAccepted accepted;
  accepted.test_id = test.id();
  accepted.server_threads = threads;
  accepted.server_version = TESTIO_VERSION;
  co_await control.write(control::to_json(accepted));
  bool arrived = co_await test.all_arrived_->wait(kArrivalLimit);
  test.gathering_ = false;
  if (!arrived)
    throw control::ProtocolError(
        std::to_string(connections - test.all_arrived_->remaining()) + " of " +
        std::to_string(connections) + " data connections arrived within " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kArrivalLimit).count()) + " s");

  // 2. Receivers on the workers, reading from the moment start is sent.
  auto counters = std::make_unique<stats::StreamCounters[]>(connections);
  auto receivers_done = std::make_shared<CompletionLatch>(co_await asio::this_coro::executor, connections);
  std::string clamp_warning;
  WorkerPool pool(threads);
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket& socket = *test.sockets_[i];
    if (request.window)
      clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), request.window));
    Worker& worker = pool.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    worker.add_stream(std::make_unique<workloads::TcpReceiver>(
        std::move(owned), counters[i], request.recv_mode, request.buffer,
        [receivers_done] { receivers_done->count_down(); }));
  }
  test.sockets_.clear();
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  pool.start();
  workloads::TestClock clock{workloads::Clock::now()};
  pool.begin(clock);
  co_await control.write(control::start_message());

  // 3. The client reports its senders done after half-closing them; a vanished client ends the
  // test here with an exception (its control connection closes).
  control::StreamsReport sent = control::parse_streams_report(
      co_await control.read(sender_done_limit(request)), "sender_done", connections);

  // 4. Every receiver reads to EOF, so the counts below are final.
  bool drained = co_await receivers_done->wait(kDrainLimit);
  pool.stop();
  control::StreamsReport received;
  for (std::uint32_t i = 0; i < connections; ++i) {
    stats::StreamFigures figures = stats::figures_from(counters[i], 0);
    if (!counters[i].finished.load(std::memory_order_acquire)) figures.failed = true;
    received.streams.push_back(figures);
  }
  if (!drained)
    spdlog::warn("{} connections had not reached EOF {} s after the client finished sending",
                 receivers_done->remaining(), std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
  co_await control.write(control::to_json(received, "results"));

  // 5. The server's own report.
  report::TestReport report;
  report.from_client = false;
  report.peer = control.peer();
  report.connections = connections;
  report.client_threads = request.client_threads;
  report.server_threads = threads;
  report.duration_s = request.duration_s;
  report.total_bytes = request.total_bytes;
  report.buffer = request.buffer;
  report.window = request.window;
  report.recv_mode = request.recv_mode;
  report.sent = sent.streams;
  report.received = received.streams;
  report.per_stream_lines = config.verbosity > 0 || connections <= 4;
  report::print_text_report(std::cout, report);
  co_return stats::summarize(received.streams).failed_streams == 0;
}

}  // namespace testio::engine
