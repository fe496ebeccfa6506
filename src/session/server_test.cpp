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

// Before-start workloads' connections, which the client opens before the window does.
std::size_t connections_before_start(const TestParts& parts) {
  std::size_t count = 0;
  for (const TestPart& part : parts)
    if (part.before_start()) count += part.connections();
  return count;
}

}  // namespace

ServerTest::ServerTest(asio::any_io_executor executor, std::uint64_t id, control::TestRequest request, TestParts parts,
                       std::vector<std::uint32_t> cpus, asio::ip::address peer, asio::ip::address local)
    : executor_(executor),
      id_(id),
      request_(std::move(request)),
      parts_(std::move(parts)),
      cpus_(std::move(cpus)),
      peer_(std::move(peer)),
      local_(std::move(local)),
      sockets_(parts_.connections()),
      all_arrived_(std::make_shared<engines::CompletionLatch>(executor, connections_before_start(parts_))) {}

ServerTest::~ServerTest() = default;

std::string ServerTest::attach(std::uint32_t number, tcp::socket socket) {
  auto [part, index] = parts_.locate(number);
  if (!part)
    return "stream " + std::to_string(number) + " is beyond the test's " + std::to_string(parts_.connections()) +
           " connections";
  if (!part->before_start()) {
    if (phase_ != Phase::running) return "the transfers have not started (or have ended)";
    return part->side->route(index, part->streams->move_to_worker(index, std::move(socket)),
                             part->streams->worker_for(index));
  }
  if (phase_ != Phase::gathering) return "the test has already started";
  if (sockets_[number]) return "stream " + std::to_string(number) + " arrived twice";
  sockets_[number].emplace(std::move(socket));
  all_arrived_->count_down();
  return {};
}

std::string ServerTest::attach_flow(std::uint32_t number, const asio::ip::udp::endpoint& from, std::uint16_t port) {
  if (phase_ != Phase::running) return "the test is not running";
  auto [part, index] = parts_.locate(number);
  if (!part)
    return "flow " + std::to_string(number) + " is beyond the test's " + std::to_string(parts_.connections()) +
           " flows";
  if (flow_peers_.empty()) {
    flow_peers_.resize(parts_.connections());
    flow_fds_.assign(parts_.connections(), -1);
  }
  unsigned char answer[workloads::udp::kHelloSize];
  workloads::udp::write_hello({id_, number}, true, answer);
  if (flow_peers_[number]) {
    if (*flow_peers_[number] != from) return "flow " + std::to_string(number) + " said hello from a second address";
    (void)::send(flow_fds_[number], answer, sizeof(answer), MSG_DONTWAIT);  // its answer was lost
    return {};
  }
  engines::Worker& worker = part->streams->worker_for(index);
  asio::ip::udp::socket socket(worker.context());
  try {
    const asio::ip::udp::endpoint local(local_.is_unspecified() ? asio::ip::address(asio::ip::address_v6::any()) : local_,
                                        port);
    socket.open(local.protocol());
    socket.set_option(asio::socket_base::reuse_address(true));  // the port is shared by every flow
    socket.bind(local);
    socket.connect(from);  // from now on the kernel gives this socket the flow's datagrams
  } catch (const std::system_error& error) {
    return "cannot open a socket for flow " + std::to_string(number) + ": " + error.code().message();
  }
  const int fd = socket.native_handle();
  std::string refusal = part->side->route_flow(index, std::move(socket), worker);
  if (!refusal.empty()) return refusal;
  flow_peers_[number] = from;
  flow_fds_[number] = fd;
  (void)::send(fd, answer, sizeof(answer), MSG_DONTWAIT);
  return {};
}

asio::awaitable<bool> ServerTest::run(control::ControlChannel& control, report::Reporter& reporter) {
  struct Over {  // on every way out: no more connections are taken, and the workers stop
    ServerTest& test;
    ~Over() {
      test.phase_ = Phase::over;
      test.parts_.stop();
    }
  } over{*this};
  co_await accept(control);
  co_await gather();
  open_streams(control.peer());
  co_await start(control, reporter);
  co_await wait_for_client(control);
  co_await finish_streams();
  co_await exchange_results(control);
  co_return report(reporter);
}

asio::awaitable<void> ServerTest::accept(control::ControlChannel& control) {
  control::TestAccepted accepted;
  accepted.test_id = id_;
  accepted.server_threads = parts_.threads();
  accepted.server_cpus = cpus_;
  accepted.server_version = TESTIO_VERSION;
  accepted.server_received_ns = request_arrived_ns_;
  accepted.server_clock_ns = stats::realtime_ns();
  co_await control.write(control::to_json(accepted));
}

// Every data connection a before-start workload needs; none for one whose connections come later.
asio::awaitable<void> ServerTest::gather() {
  const bool arrived = co_await all_arrived_->wait(kArrivalLimit);
  const std::size_t expected = connections_before_start(parts_);
  if (!arrived)
    throw control::ProtocolError(
        std::to_string(expected - all_arrived_->remaining()) + " of " + std::to_string(expected) +
        " data connections arrived within " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kArrivalLimit).count()) + " s");
}

// Each workload's streams on its workers: on the gathered connections, tuned as the client asked.
void ServerTest::open_streams(const std::string& peer) {
  std::string clamp_warning;
  for (TestPart& part : parts_) open_part(part, peer, clamp_warning);
  sockets_.clear();
  parts_.front().start.spec.with = request_.spec.with;  // the whole test, as the client's report has it
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
}

void ServerTest::open_part(TestPart& part, const std::string& peer, std::string& clamp_warning) {
  const spec::TestSpec& spec = part.spec;
  part.streams = std::make_unique<TestStreams>(executor_, part.layout, part.threads, cpus_, spec, Side::server);
  part.streams->number_from(part.first);
  part.start = start_info(spec, request_.client_threads, parts_.threads(), /*from_client=*/false);
  part.start.peer = peer;
  part.start.server_cpus = cpus_;
  for (std::uint32_t i = 0; i < part.connections(); ++i) {
    std::optional<tcp::socket> socket;
    if (part.before_start()) {
      socket = std::move(*sockets_[part.first + i]);
      std::string clamped = tune_data_connection(socket->native_handle(), spec, part.layout.sends_on(Side::server, i));
      if (!clamped.empty()) clamp_warning = clamped;
      note_connection(part.start, *socket);
    }
    part.streams->add(*part.side, i, std::move(socket), {}, {}, id_);
  }
  part.side->describe_start(part.start);
  part.streams->start();
}

// The window opens when the streams begin; the client is told to start right after.
asio::awaitable<void> ServerTest::start(control::ControlChannel& control, report::Reporter& reporter) {
  const engines::TestClock clock = engines::TestClock::starting_now(request_.spec);
  const auto timestamp = static_cast<std::int64_t>(std::time(nullptr));
  for (TestPart& part : parts_) part.start.timestamp = timestamp;
  TestPart& first = parts_.front();
  parts_.show_live(reporter, Side::server);
  parts_.begin(clock);
  phase_ = Phase::running;  // from now on a during-test workload's connections go to their slots
  co_await control.write(control::start_message());
  const bool live_forward = first.layout.live_forward();
  reporter.start(direction_start(first.start, first.layout.connections(live_forward),
                                 first.layout.sends(Side::server, live_forward)));
}

// The client sends its first workload's figures once its streams are done (a vanished client ends
// the test here, with an exception, as its control connection closes). A stop before that (the
// client's SIGINT) ends this side's windows early. Intervals tick meanwhile.
asio::awaitable<void> ServerTest::wait_for_client(control::ControlChannel& control) {
  using namespace asio::experimental::awaitable_operators;
  auto client_done = [&]() -> asio::awaitable<nlohmann::json> {
    for (;;) {
      nlohmann::json message = co_await control.read(engines::run_limit(request_.spec, kWindowGrace));
      if (!control::is_stop(message)) co_return message;
      parts_.end_window();
    }
  };
  TestPart& first = parts_.front();
  control.allow_frames_up_to(control::figures_frame_bound(first.connections(), 0));  // totals only, no intervals
  auto outcome = co_await (control::capture(client_done()) || parts_.sample());
  auto& message = std::get<0>(outcome);
  if (message.error) std::rethrow_exception(message.error);
  first.theirs = control::parse_directed_results(*message.value, first.side->done_message(), first.layout.forward,
                                                 first.layout.reverse);
}

// Every stream reaches its end (receivers read to EOF; a transfer slot ends with its window), so
// the counts are final; then the workers stop.
asio::awaitable<void> ServerTest::finish_streams() {
  parts_.end_window();
  const bool drained = co_await parts_.all_done(kDrainLimit);
  if (!drained)
    spdlog::warn("{} connections had not ended {} s after the client finished", parts_.remaining(),
                 std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
  phase_ = Phase::over;
  for (TestPart& part : parts_) {
    part.mine = part.streams->measurement().finish(Side::server);
    part.mine->forward.tests_beside = tests_beside_;
    if (part.mine->reverse) part.mine->reverse->tests_beside = tests_beside_;
  }
  parts_.stop();
}

// Our figures for each workload, in order; the client's for every workload after the first come
// as the answer to the one before.
asio::awaitable<void> ServerTest::exchange_results(control::ControlChannel& control) {
  for (std::size_t k = 0; k < parts_.size(); ++k) {
    TestPart& part = parts_[k];
    if (k > 0) {
      control.allow_frames_up_to(control::figures_frame_bound(part.connections(), 0));
      nlohmann::json message = co_await control.read(kDrainLimit);
      part.theirs = control::parse_directed_results(message, part.side->done_message(), part.layout.forward,
                                                    part.layout.reverse);
    }
    co_await control.write(control::to_json(*part.mine, "results"));
  }
}

// The server's own report: its figures, and the client's beside them, for every workload.
bool ServerTest::report(report::Reporter& reporter) {
  std::vector<report::TestReport> reports;
  bool clean = true;
  for (TestPart& part : parts_) {
    report::TestReport report =
        side_by_side(part.start, part.layout, Side::server, std::move(*part.mine), std::move(part.theirs));
    part.side->add_to_report(report);
    for (const report::TestReport* direction : {static_cast<const report::TestReport*>(&report), report.bidir_reverse.get()})
      if (direction && (stats::summarize(direction->local().totals).failed_streams || !direction->mismatched_streams.empty()))
        clean = false;
    reports.push_back(std::move(report));
  }
  reported_ = true;
  reporter.end(TestParts::joined(std::move(reports)));
  return clean;
}

std::pair<std::uint64_t, std::uint64_t> ServerTest::bytes_so_far() noexcept {
  std::uint64_t received = 0, sent = 0;
  if (reported_) return {0, 0};
  for (TestPart& part : parts_) {
    if (!part.streams) continue;
    DirectedMeasurement& measurement = part.streams->measurement();
    for (std::uint32_t connection = 0; connection < part.connections(); ++connection) {
      const std::uint64_t bytes = measurement.counters(connection).bytes.load(std::memory_order_relaxed);
      (part.layout.sends_on(Side::server, connection) ? sent : received) += bytes;
    }
  }
  return {received, sent};
}

}  // namespace testio::session
