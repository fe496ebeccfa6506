#include "engine/run_server.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <spdlog/spdlog.h>

#include "engine/bulk_streams.hpp"
#include "engine/directions.hpp"
#include "engine/send_setup.hpp"
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

// -R and --bidir: what the server's senders send, as the client's own would: the generated block
// (one per worker), from a memfd for sendfile, with the request's pacing.
class ServerSenders {
 public:
  ServerSenders(const control::TestRequest& request, unsigned workers, bool any)
      : request_(request), mode_(request.send_mode) {
    if (!any) return;
    for (unsigned i = 0; i < workers; ++i) payloads_.push_back(util::make_pattern(request.buffer));
    if (mode_ == config::SendMode::sendfile) file_ = open_send_file("", request.buffer);
  }

  // Sender k of `count`, on worker `worker`. Zerocopy falls back to copying, once, when refused.
  SenderSpec spec(tcp::socket& socket, unsigned worker, std::uint32_t k, std::uint32_t count,
                  report::StartInfo& start) {
    if (mode_ == config::SendMode::zerocopy && !enable_zerocopy(socket)) {
      spdlog::warn("SO_ZEROCOPY is not supported here ({}): sending by copy", std::strerror(errno));
      mode_ = start.send_mode = config::SendMode::send;
    }
    SenderSpec spec;
    spec.payload = payloads_[worker].get();
    spec.payload_size = static_cast<std::size_t>(request_.buffer);
    spec.pacing = workloads::SendPacing{request_.rate_bps};
    spec.chunk = spec.pacing.chunk(request_.buffer);
    spec.quota = stats::share_of_total(request_.total_bytes, count, k);
    spec.rate_lowat = request_.rate_lowat;
    spec.source = workloads::SendSource{mode_, file_.get(), 0};
    return spec;
  }

 private:
  const control::TestRequest& request_;
  config::SendMode mode_;
  std::vector<std::unique_ptr<char[]>> payloads_;
  util::UniqueFd file_;
};

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
      sockets_(request.transfers ? 0 : DirectionLayout::of(request.direction, request.connections).total()),
      all_arrived_(std::make_shared<CompletionLatch>(
          executor, DirectionLayout::of(request.direction, request.connections).total())),
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
  const DirectionLayout layout = DirectionLayout::of(request.direction, request.connections);
  const std::uint32_t connections = layout.total();
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

  // 2. Receivers (and, for -R and --bidir, senders) on the workers, from the moment start is sent.
  const double window_s = (request.total_bytes || request.duration_s <= 0) ? 0 : request.omit_s + request.duration_s;
  DirectedMeasurement measurement(layout, request.interval_s, request.omit_s, window_s);
  auto streams_done = std::make_shared<CompletionLatch>(co_await asio::this_coro::executor, connections);
  std::string clamp_warning;
  report::StartInfo start = start_info(request, threads, /*from_client=*/false);
  start.peer = control.peer();
  start.server_cpus = test.cpus();
  start.rate_bps = request.rate_bps;
  start.send_mode = request.send_mode;
  WorkerPool pool(threads, test.cpus());
  ServerSenders senders(request, pool.size(), layout.reverse > 0);
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket& socket = *test.sockets_[i];
    const bool receiving = layout.is_forward(i);
    if (request.window)
      clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), request.window));
    net::TcpTuning tuning;
    tuning.congestion = request.congestion;
    tuning.no_delay = request.no_delay;
    if (!receiving) tuning.fq_rate_bps = request.fq_rate_bps;
    net::apply_tuning(socket.native_handle(), tuning);
    note_connection(start, socket);
    if (i == 0 && request.iface_stats)
      measurement.live().watch_nics(net::choose_nics(request.iface_names, socket.local_endpoint().data()));
    Worker& worker = pool.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    measurement.watch_socket(i, owned.native_handle());
    auto done = [streams_done] { streams_done->count_down(); };
    if (request.rr) {
      worker.add_stream(std::make_unique<workloads::TcpEcho>(std::move(owned), measurement.counters(i),
                                                             kEchoBuffer, done,
                                                             connections <= threads ? &worker.signals() : nullptr));
    } else if (receiving) {
      ReceiverSpec spec{request.recv_mode, static_cast<std::size_t>(request.buffer), std::nullopt,
                        request.rate_lowat && workloads::receivers_batch_wakeups(connections, threads)};
      if (request.hash != util::HashKind::none)
        spec.digest.emplace(workloads::StreamDigest{util::Digest(request.hash), &measurement.digest(i)});
      add_receiver(worker, request.engine, std::move(owned), measurement.counters(i), std::move(spec), done);
    } else {
      SenderSpec spec = senders.spec(owned, worker.index(), layout.index_in_direction(i), layout.reverse, start);
      add_sender(worker, request.engine, std::move(owned), measurement.counters(i), std::move(spec), done);
    }
  }
  test.sockets_.clear();
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  pool.start();
  workloads::TestClock clock{workloads::Clock::now()};
  if (window_s > 0)
    clock.deadline = clock.start + std::chrono::duration_cast<workloads::Clock::duration>(
                                       std::chrono::duration<double>(window_s));
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  measurement.begin(clock);
  pool.begin(clock);
  co_await control.write(control::start_message());
  reporter.start(direction_start(start, layout.connections(layout.live_forward()), !layout.live_forward()));

  // 3. The client reports its streams done after its senders half-closed and its receivers saw
  // EOF; a vanished client ends the test here with an exception (its control connection closes).
  // A stop before that (the client's SIGINT) ends this side's senders early. Intervals tick.
  auto client_done = [&]() -> asio::awaitable<nlohmann::json> {
    for (;;) {
      nlohmann::json message = co_await control.read(sender_done_limit(request));
      if (!control::is_stop(message)) co_return message;
      pool.end_window();
    }
  };
  auto outcome = co_await (control::capture(client_done()) || measurement.sample(reporter));
  auto& message = std::get<0>(outcome);
  if (message.error) std::rethrow_exception(message.error);
  control::DirectedResults client =
      control::parse_directed_results(*message.value, "sender_done", layout.forward, layout.reverse);

  // 4. Every receiver reads to EOF, so the counts below are final.
  bool drained = co_await streams_done->wait(kDrainLimit);
  if (!drained)
    spdlog::warn("{} connections had not ended {} s after the client finished",
                 streams_done->remaining(), std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
  control::DirectedResults mine = measurement.finish(reporter, /*local_sends_forward=*/false);
  mine.forward.tests_beside = test.tests_beside();
  if (mine.reverse) mine.reverse->tests_beside = test.tests_beside();
  pool.stop();
  co_await control.write(control::to_json(mine, "results"));

  // 5. The server's own report: its figures, and the client's totals beside them.
  std::optional<report::TestReport> forward, reverse;
  if (layout.forward) forward = direction_report(start, layout, true, std::move(client.forward), std::move(mine.forward));
  if (layout.reverse) reverse = direction_report(start, layout, false, std::move(mine.reverse), std::move(client.reverse));
  bool clean = true;
  for (const report::TestReport* direction : {forward ? &*forward : nullptr, reverse ? &*reverse : nullptr})
    if (direction && stats::summarize(direction->local().totals).failed_streams) clean = false;
  reporter.end(final_report(std::move(forward), std::move(reverse)));
  co_return clean;
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

  report::TestReport report =
      direction_report(start, DirectionLayout{slots, 0}, true, std::move(sent), std::move(received));
  reporter.end(report);
  co_return stats::summarize(report.sender.totals).failed_streams == 0 && report.mismatched_streams.empty();
}

}  // namespace testio::engine
