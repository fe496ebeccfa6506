#include "engine/run_server.hpp"

#include <chrono>
#include <ctime>

#include <spdlog/spdlog.h>

#include "engine/measurement.hpp"
#include "engine/test_start.hpp"
#include "engine/worker_pool.hpp"
#include "net/nic_counters.hpp"
#include "net/socket_options.hpp"
#include "workloads/tcp_rr.hpp"
#include "workloads/tcp_stream.hpp"

namespace testio::engine {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr auto kArrivalLimit = 10s;    // for all data connections after test_accepted
constexpr auto kWindowGrace = 60s;     // beyond -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;      // from sender_done to EOF on every stream
constexpr std::size_t kEchoBuffer = 256 * 1024;  // an echo writes back whatever one read returned

std::chrono::steady_clock::duration sender_done_limit(const control::TestRequest& request) {
  // A byte-count test has no window to bound it; a vanished client still ends it, since its
  // control connection closes.
  if (request.total_bytes || request.duration_s <= 0) return std::chrono::hours(24 * 365);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(request.omit_s + request.duration_s)) + kWindowGrace;
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
                                      report::Reporter& reporter) {
  using namespace asio::experimental::awaitable_operators;
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
  const double window_s = (request.total_bytes || request.duration_s <= 0) ? 0 : request.omit_s + request.duration_s;
  Measurement measurement(connections, request.interval_s, request.omit_s, window_s);
  auto receivers_done = std::make_shared<CompletionLatch>(co_await asio::this_coro::executor, connections);
  std::string clamp_warning;
  report::StartInfo start = start_info(request, threads, /*from_client=*/false);
  start.peer = control.peer();
  WorkerPool pool(threads);
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket& socket = *test.sockets_[i];
    if (request.window)
      clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), request.window));
    note_connection(start, socket);
    if (i == 0 && request.iface_stats)
      measurement.watch_nics(net::choose_nics(request.iface_names, socket.local_endpoint().data()));
    Worker& worker = pool.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    measurement.watch_socket(i, owned.native_handle());
    auto done = [receivers_done] { receivers_done->count_down(); };
    if (request.rr)
      worker.add_stream(std::make_unique<workloads::TcpEcho>(std::move(owned), measurement.counters(i),
                                                             kEchoBuffer, done));
    else
      worker.add_stream(std::make_unique<workloads::TcpReceiver>(std::move(owned), measurement.counters(i),
                                                                 request.recv_mode, request.buffer, done));
  }
  test.sockets_.clear();
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  pool.start();
  workloads::TestClock clock{workloads::Clock::now()};
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  measurement.begin(clock);
  pool.begin(clock);
  co_await control.write(control::start_message());
  reporter.start(start);

  // 3. The client reports its senders done after half-closing them; a vanished client ends the
  // test here with an exception (its control connection closes). Intervals tick meanwhile.
  auto outcome = co_await (control::capture(control.read(sender_done_limit(request))) ||
                           measurement.sample(reporter));
  auto& message = std::get<0>(outcome);
  if (message.error) std::rethrow_exception(message.error);
  control::SideResults sent = control::parse_side_results(*message.value, "sender_done", connections);

  // 4. Every receiver reads to EOF, so the counts below are final.
  bool drained = co_await receivers_done->wait(kDrainLimit);
  if (!drained)
    spdlog::warn("{} connections had not reached EOF {} s after the client finished sending",
                 receivers_done->remaining(), std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
  control::SideResults received = measurement.finish(reporter, /*sender=*/false);
  received.tests_beside = test.tests_beside_;
  pool.stop();
  co_await control.write(control::to_json(received, "results"));

  // 5. The server's own report: its receivers' figures, and the client's totals beside them.
  report::TestReport report;
  report.start = start;
  report.tests_beside = received.tests_beside;
  for (std::size_t i = 0; i < connections; ++i)
    if (sent.streams[i].bytes != received.streams[i].bytes) report.mismatched_streams.push_back(static_cast<std::uint32_t>(i));
  report.sender.present = true;
  report.sender.totals = sent.streams;
  report.sender.cpu = sent.cpu;
  report.sender.wall_s = sent.wall_s;
  report.sender.congestion = sent.congestion;
  report.sender.cores = sent.cores;
  report.receiver.present = true;
  report.receiver.totals = received.streams;
  report.receiver.intervals = std::move(received.intervals);
  report.receiver.cpu = received.cpu;
  report.receiver.wall_s = received.wall_s;
  report.receiver.congestion = received.congestion;
  report.receiver.cores = received.cores;
  reporter.end(report);
  co_return stats::summarize(report.receiver.totals).failed_streams == 0;
}

}  // namespace testio::engine
