#include "engine/run_server.hpp"

#include <chrono>
#include <ctime>

#include <spdlog/spdlog.h>

#include "engine/bulk_streams.hpp"
#include "engine/measurement.hpp"
#include "engine/test_start.hpp"
#include "engine/worker_pool.hpp"
#include "net/nic_counters.hpp"
#include "net/socket_options.hpp"
#include "util/pattern.hpp"
#include "workloads/tcp_crr.hpp"
#include "workloads/tcp_rr.hpp"
#include "workloads/tcp_stream.hpp"
#include "workloads/uring_loop.hpp"

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

// The server's report of a test: both sides' figures as sender and receiver, whichever this is.
report::TestReport server_report(const report::StartInfo& start, control::SideResults sent,
                                 control::SideResults received) {
  report::TestReport report;
  report.start = start;
  const control::SideResults& local = start.local_is_sender ? sent : received;
  report.tests_beside = local.tests_beside;
  for (std::size_t i = 0; i < sent.streams.size() && i < received.streams.size(); ++i)
    if (sent.streams[i].bytes != received.streams[i].bytes) report.mismatched_streams.push_back(static_cast<std::uint32_t>(i));
  if (!start.hash.empty()) {
    report.digests.hash = start.hash;
    report.digests.sent = sent.digests;
    report.digests.received = received.digests;
  }
  report.sender = side_report(std::move(sent));
  report.receiver = side_report(std::move(received));
  return report;
}

nlohmann::json accepted_message(const ServerTest& test, unsigned threads) {
  control::TestAccepted accepted;
  accepted.test_id = test.id();
  accepted.server_threads = threads;
  accepted.server_cpus = test.cpus();
  accepted.server_version = TESTIO_VERSION;
  return control::to_json(accepted);
}

}  // namespace

ServerTest::ServerTest(asio::any_io_executor executor, std::uint64_t id,
                       const control::TestRequest& request, const util::MappedFile* served_file)
    : id_(id),
      request_(request),
      sockets_(request.transfers ? 0 : request.connections),
      all_arrived_(std::make_shared<CompletionLatch>(executor, request.connections)),
      served_file_(served_file) {}

std::string ServerTest::attach(std::uint32_t index, tcp::socket socket) {
  if (router_) return router_(index, std::move(socket));
  if (request_.transfers) return "the transfers have not started (or have ended)";
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
  const unsigned threads = config::worker_threads(request.engine, request.threads, connections);

  // A server that cannot run the engine asked for says so instead of accepting.
  if (request.engine == config::Engine::uring) {
    const bool zerocopy = request.direction != config::Direction::forward &&
                          request.send_mode == config::SendMode::zerocopy;
    if (std::string reason = workloads::uring_unusable_reason(zerocopy); !reason.empty())
      throw std::runtime_error(reason);
  }

  // 1. Accept, then wait for every data connection.
  co_await control.write(accepted_message(test, threads));
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
  start.server_cpus = test.cpus();
  WorkerPool pool(threads, test.cpus());
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket& socket = *test.sockets_[i];
    if (request.window)
      clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), request.window));
    net::TcpTuning tuning;
    tuning.congestion = request.congestion;
    tuning.no_delay = request.no_delay;
    net::apply_tuning(socket.native_handle(), tuning);
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
                                                             kEchoBuffer, done,
                                                             connections <= threads ? &worker.signals() : nullptr));
    else {
      ReceiverSpec spec{request.recv_mode, static_cast<std::size_t>(request.buffer), std::nullopt};
      if (request.hash != util::HashKind::none)
        spec.digest.emplace(workloads::StreamDigest{util::Digest(request.hash), &measurement.digest(i)});
      add_receiver(worker, request.engine, std::move(owned), measurement.counters(i), std::move(spec), done);
    }
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
  received.tests_beside = test.tests_beside();
  pool.stop();
  co_await control.write(control::to_json(received, "results"));

  // 5. The server's own report: its receivers' figures, and the client's totals beside them.
  report::TestReport report = server_report(start, std::move(sent), std::move(received));
  reporter.end(report);
  co_return stats::summarize(report.receiver.totals).failed_streams == 0;
}

asio::awaitable<bool> run_server_transfers(control::ControlChannel& control, ServerTest& test,
                                           report::Reporter& reporter) {
  using namespace asio::experimental::awaitable_operators;
  const control::TestRequest& request = test.request();
  const std::uint32_t slots = request.connections;
  const unsigned threads = config::effective_threads(request.threads, slots);
  co_await control.write(accepted_message(test, threads));

  // 1. One source per slot on the workers. Each transfer is a prefix of the served file, or a
  // generated block repeated.
  Measurement measurement(slots, request.interval_s, 0, 0);
  std::unique_ptr<char[]> generated;
  const char* payload = nullptr;
  std::size_t payload_size = 0;
  if (const util::MappedFile* file = test.served_file()) {
    payload = file->data();
    payload_size = file->size();
  } else {
    generated = util::make_pattern(request.buffer);
    payload = generated.get();
    payload_size = request.buffer;
  }
  WorkerPool pool(threads, test.cpus());
  std::vector<workloads::TransferSource*> sources;
  for (std::uint32_t i = 0; i < slots; ++i) {
    auto source = std::make_unique<workloads::TransferSource>(measurement.counters(i), payload, payload_size,
                                                              request.buffer, request.transfer_size, request.reuse);
    sources.push_back(source.get());
    pool.worker_for_stream(i).add_stream(std::move(source));
  }
  report::StartInfo start = start_info(request, threads, /*from_client=*/false);
  start.peer = control.peer();
  start.server_cpus = test.cpus();
  pool.start();
  workloads::TestClock clock{workloads::Clock::now()};
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  measurement.begin(clock);
  pool.begin(clock);

  // 2. From now on each data connection naming slot i goes to its source, on its worker.
  test.route_to([&](std::uint32_t index, tcp::socket socket) -> std::string {
    if (index >= slots)
      return "slot " + std::to_string(index) + " is beyond the test's " + std::to_string(slots) + " connections";
    Worker& worker = pool.worker_for_stream(index);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    auto owned = std::make_shared<tcp::socket>(worker.context(), protocol, socket.release());
    worker.post([source = sources[index], owned] { source->serve(std::move(*owned)); });
    return {};
  });
  struct Unroute {  // on every way out, before the workers stop
    ServerTest& test;
    ~Unroute() { test.route_to(nullptr); }
  } unroute{test};
  co_await control.write(control::start_message());
  reporter.start(start);

  // 3. The client says when its last transfer is done; a vanished client ends the test here.
  const auto forever = std::chrono::steady_clock::duration(std::chrono::hours(24 * 365));
  auto outcome = co_await (control::capture(control.read(forever)) || measurement.sample(reporter));
  auto& message = std::get<0>(outcome);
  if (message.error) std::rethrow_exception(message.error);
  control::SideResults received = control::parse_side_results(*message.value, "transfers_done", slots);

  // 4. The client has read every transfer to its end (and closed a kept connection only after
  // the server's close), so once the workers stop the counts are final.
  test.route_to(nullptr);
  pool.end_window();
  pool.stop();
  control::SideResults sent = measurement.finish(reporter, /*sender=*/true);
  sent.tests_beside = test.tests_beside();
  co_await control.write(control::to_json(sent, "results"));

  report::TestReport report = server_report(start, std::move(sent), std::move(received));
  reporter.end(report);
  co_return stats::summarize(report.sender.totals).failed_streams == 0 && report.mismatched_streams.empty();
}

}  // namespace testio::engine
