// The server's test, top to bottom: ServerTest::run() is the lifecycle, each step a function below
// it in the order it runs, as on the client (session/client.cpp).
#include "session/server_test.hpp"

#include <chrono>
#include <ctime>

#include <sys/socket.h>

#include <asio/experimental/awaitable_operators.hpp>
#include <nlohmann/json.hpp>

#include "session/test_start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/udp/datagram.hpp"

namespace testio::session {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using workloads::Side;

constexpr auto kArrivalLimit = 10s;  // for all data connections after test_accepted
constexpr auto kWindowGrace = 60s;   // beyond -O + -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;    // from the client's figures to the end of every stream

}  // namespace

ServerTest::ServerTest(asio::any_io_executor executor, std::uint64_t id, control::TestRequest request,
                       std::unique_ptr<workloads::TestSide> side, std::vector<std::uint32_t> cpus,
                       asio::ip::address peer, asio::ip::address local)
    : executor_(executor),
      id_(id),
      request_(std::move(request)),
      side_(std::move(side)),
      layout_(side_->layout()),
      threads_(spec::worker_threads(request_.spec.engine, request_.spec.threads, layout_.total())),
      cpus_(std::move(cpus)),
      peer_(std::move(peer)),
      local_(std::move(local)),
      sockets_(side_->connections() == workloads::Connections::before_start ? layout_.total() : 0),
      all_arrived_(std::make_shared<engines::CompletionLatch>(executor, sockets_.size())) {}

ServerTest::~ServerTest() = default;

std::string ServerTest::attach(std::uint32_t index, tcp::socket socket) {
  const bool during_test = side_->connections() == workloads::Connections::during_test;
  if (during_test && phase_ != Phase::running) return "the transfers have not started (or have ended)";
  if (during_test) {
    if (index >= layout_.total())
      return "slot " + std::to_string(index) + " is beyond the test's " + std::to_string(layout_.total()) +
             " connections";
    return side_->route(index, streams_->move_to_worker(index, std::move(socket)), streams_->worker_for(index));
  }
  if (phase_ != Phase::gathering) return "the test has already started";
  if (index >= sockets_.size())
    return "stream " + std::to_string(index) + " is beyond the test's " + std::to_string(sockets_.size()) +
           " connections";
  if (sockets_[index]) return "stream " + std::to_string(index) + " arrived twice";
  sockets_[index].emplace(std::move(socket));
  all_arrived_->count_down();
  return {};
}

std::string ServerTest::attach_flow(std::uint32_t index, const asio::ip::udp::endpoint& from, std::uint16_t port) {
  if (phase_ != Phase::running) return "the test is not running";
  if (index >= layout_.total())
    return "flow " + std::to_string(index) + " is beyond the test's " + std::to_string(layout_.total()) + " flows";
  if (flow_peers_.empty()) {
    flow_peers_.resize(layout_.total());
    flow_fds_.assign(layout_.total(), -1);
  }
  unsigned char answer[workloads::udp::kHelloSize];
  workloads::udp::write_hello({id_, index}, true, answer);
  if (flow_peers_[index]) {
    if (*flow_peers_[index] != from) return "flow " + std::to_string(index) + " said hello from a second address";
    (void)::send(flow_fds_[index], answer, sizeof(answer), MSG_DONTWAIT);  // its answer was lost
    return {};
  }
  engines::Worker& worker = streams_->worker_for(index);
  asio::ip::udp::socket socket(worker.context());
  try {
    const asio::ip::udp::endpoint local(local_.is_unspecified() ? asio::ip::address(asio::ip::address_v6::any()) : local_,
                                        port);
    socket.open(local.protocol());
    socket.set_option(asio::socket_base::reuse_address(true));  // the port is shared by every flow
    socket.bind(local);
    socket.connect(from);  // from now on the kernel gives this socket the flow's datagrams
  } catch (const std::system_error& error) {
    return "cannot open a socket for flow " + std::to_string(index) + ": " + error.code().message();
  }
  const int fd = socket.native_handle();
  std::string refusal = side_->route_flow(index, std::move(socket), worker);
  if (!refusal.empty()) return refusal;
  flow_peers_[index] = from;
  flow_fds_[index] = fd;
  (void)::send(fd, answer, sizeof(answer), MSG_DONTWAIT);
  return {};
}

asio::awaitable<bool> ServerTest::run(control::ControlChannel& control, report::Reporter& reporter) {
  struct Over {  // on every way out: no more connections are taken, and the workers stop
    ServerTest& test;
    ~Over() {
      test.phase_ = Phase::over;
      if (test.streams_) test.streams_->stop();
    }
  } over{*this};
  co_await accept(control);
  co_await gather();
  open_streams(control.peer());
  co_await start(control, reporter);
  control::DirectedResults client = co_await wait_for_client(control);
  co_await finish_streams();
  co_await control.write(control::to_json(mine_, "results"));
  co_return report(reporter, std::move(client));
}

asio::awaitable<void> ServerTest::accept(control::ControlChannel& control) {
  control::TestAccepted accepted;
  accepted.test_id = id_;
  accepted.server_threads = threads_;
  accepted.server_cpus = cpus_;
  accepted.server_version = TESTIO_VERSION;
  accepted.server_received_ns = request_arrived_ns_;
  accepted.server_clock_ns = stats::realtime_ns();
  co_await control.write(control::to_json(accepted));
}

// Every data connection a before-start workload needs; none for one whose connections come later.
asio::awaitable<void> ServerTest::gather() {
  const bool arrived = co_await all_arrived_->wait(kArrivalLimit);
  if (!arrived)
    throw control::ProtocolError(
        std::to_string(sockets_.size() - all_arrived_->remaining()) + " of " + std::to_string(sockets_.size()) +
        " data connections arrived within " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kArrivalLimit).count()) + " s");
}

// The workload's streams on the workers: on the gathered connections, tuned as the client asked.
void ServerTest::open_streams(const std::string& peer) {
  const spec::TestSpec& spec = request_.spec;
  streams_.emplace(executor_, layout_, threads_, cpus_, spec, workloads::Side::server);
  start_ = start_info(spec, request_.client_threads, threads_, /*from_client=*/false);
  start_.peer = peer;
  start_.server_cpus = cpus_;
  std::string clamp_warning;
  for (std::uint32_t i = 0; i < layout_.total(); ++i) {
    std::optional<tcp::socket> socket;
    if (i < sockets_.size()) {
      socket = std::move(*sockets_[i]);
      std::string clamped = tune_data_connection(socket->native_handle(), spec, layout_.sends_on(Side::server, i));
      if (!clamped.empty()) clamp_warning = clamped;
      note_connection(start_, *socket);
    }
    streams_->add(*side_, i, std::move(socket), {}, {}, id_);
  }
  sockets_.clear();
  side_->describe_start(start_);
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  streams_->start();
}

// The window opens when the streams begin; the client is told to start right after.
asio::awaitable<void> ServerTest::start(control::ControlChannel& control, report::Reporter& reporter) {
  const engines::TestClock clock = engines::TestClock::starting_now(request_.spec);
  start_.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  streams_->measurement().show_live(reporter);
  streams_->begin(clock);
  phase_ = Phase::running;  // from now on a during-test workload's connections go to their slots
  co_await control.write(control::start_message());
  const bool live_forward = layout_.live_forward();
  reporter.start(direction_start(start_, layout_.connections(live_forward), layout_.sends(Side::server, live_forward)));
}

// The client sends its figures once its streams are done (a vanished client ends the test here,
// with an exception, as its control connection closes). A stop before that (the client's SIGINT)
// ends this side's windows early. Intervals tick meanwhile.
asio::awaitable<control::DirectedResults> ServerTest::wait_for_client(control::ControlChannel& control) {
  using namespace asio::experimental::awaitable_operators;
  auto client_done = [&]() -> asio::awaitable<nlohmann::json> {
    for (;;) {
      nlohmann::json message = co_await control.read(engines::run_limit(request_.spec, kWindowGrace));
      if (!control::is_stop(message)) co_return message;
      streams_->end_window();
    }
  };
  control.allow_frames_up_to(control::figures_frame_bound(layout_.total(), 0));  // totals only, no intervals
  auto outcome = co_await (control::capture(client_done()) || streams_->measurement().sample());
  auto& message = std::get<0>(outcome);
  if (message.error) std::rethrow_exception(message.error);
  co_return control::parse_directed_results(*message.value, side_->done_message(), layout_.forward, layout_.reverse);
}

// Every stream reaches its end (receivers read to EOF; a transfer slot ends with its window), so
// the counts are final; then the workers stop.
asio::awaitable<void> ServerTest::finish_streams() {
  streams_->end_window();
  const bool drained = co_await streams_->all_done(kDrainLimit);
  if (!drained)
    spdlog::warn("{} connections had not ended {} s after the client finished", streams_->remaining(),
                 std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
  phase_ = Phase::over;
  mine_ = streams_->measurement().finish(Side::server);
  mine_.forward.tests_beside = tests_beside_;
  if (mine_.reverse) mine_.reverse->tests_beside = tests_beside_;
  streams_->stop();
}

// The server's own report: its figures, and the client's beside them.
bool ServerTest::report(report::Reporter& reporter, control::DirectedResults client) {
  report::TestReport report = side_by_side(start_, layout_, Side::server, std::move(mine_), std::move(client));
  side_->add_to_report(report);
  bool clean = true;
  for (const report::TestReport* direction : {static_cast<const report::TestReport*>(&report), report.bidir_reverse.get()})
    if (direction && (stats::summarize(direction->local().totals).failed_streams || !direction->mismatched_streams.empty()))
      clean = false;
  reported_ = true;
  reporter.end(report);
  return clean;
}

std::pair<std::uint64_t, std::uint64_t> ServerTest::bytes_so_far() noexcept {
  std::uint64_t received = 0, sent = 0;
  if (reported_ || !streams_) return {0, 0};
  DirectedMeasurement& measurement = streams_->measurement();
  for (std::uint32_t connection = 0; connection < layout_.total(); ++connection) {
    const std::uint64_t bytes = measurement.counters(connection).bytes.load(std::memory_order_relaxed);
    (layout_.sends_on(Side::server, connection) ? sent : received) += bytes;
  }
  return {received, sent};
}

}  // namespace testio::session
