// The server's test, top to bottom: ServerTest::run() is the lifecycle, each step a function below
// it in the order it runs, as on the client (client_lifecycle.cpp).
#include "lifecycle/server_lifecycle.hpp"

#include <chrono>
#include <ctime>
#include <variant>

#include <sys/socket.h>

#include <asio/any_io_executor.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "diagnosis/verdict.hpp"
#include "lifecycle/start.hpp"
#include "lifecycle/total_rate_cap.hpp"
#include "util/log.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::lifecycle {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using workloads::Side;

// For the data connections (and gathered flows) after the acceptance: 30 s without one arriving,
// and a minute in all. Many tests starting at once on a few cores leave a client's connects
// waiting for a turn on the CPU: one still connecting is slow, not gone.
constexpr auto kArrivalLimit = 30s;
constexpr auto kArrivalCap = 60s;

// Before-start workloads' connections, which the client opens before the window does.
std::size_t connections_before_start(const TestParts& parts) {
  std::size_t count = 0;
  for (const TestPart& part : parts)
    if (part.before_start()) count += part.connections();
  return count;
}

}  // namespace

struct ServerTest::Network {
  asio::any_io_executor executor;
  asio::ip::address peer;
  asio::ip::address local;
  std::vector<std::optional<tcp::socket>> sockets;                    // by number, gathered until open_streams()
  std::vector<std::optional<asio::ip::udp::socket>> flows;            // ... the peer's own flows, likewise
  std::vector<std::optional<asio::ip::udp::endpoint>> flow_peers;     // by flow, once it said hello
};

ServerTest::ServerTest(const asio::any_io_executor& executor, std::uint64_t id, TestRequest request, TestParts parts,
                       std::vector<std::uint32_t> cpus, const asio::ip::address& peer, const asio::ip::address& local)
    : net_(std::make_unique<Network>(Network{executor, peer, local, {}, {}, {}})),
      id_(id),
      request_(std::move(request)),
      parts_(std::move(parts)),
      cpus_(std::move(cpus)),
      all_arrived_(std::make_shared<engines::CompletionLatch>(executor, connections_before_start(parts_))) {
  net_->sockets.resize(parts_.connections());
}

ServerTest::~ServerTest() = default;

const asio::ip::address& ServerTest::peer() const noexcept { return net_->peer; }

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
  if (net_->sockets[number]) return "stream " + std::to_string(number) + " arrived twice";
  net_->sockets[number].emplace(std::move(socket));
  all_arrived_->count_down();
  return {};
}

std::string ServerTest::gather_flow(std::uint32_t number, asio::ip::udp::socket socket) {
  if (phase_ != Phase::gathering || !gathers_flows_) return "the test is not gathering its flows";
  if (number >= net_->flows.size()) return "flow " + std::to_string(number) + " is beyond the test's flows";
  if (net_->flows[number]) return "flow " + std::to_string(number) + " arrived twice";
  net_->flows[number].emplace(std::move(socket));
  all_arrived_->count_down();
  return {};
}

std::string ServerTest::attach_flow(std::uint32_t number, const asio::ip::udp::endpoint& from, std::uint16_t port) {
  if (phase_ != Phase::running) return "the test is not running";
  auto [part, index] = parts_.locate(number);
  if (!part)
    return "flow " + std::to_string(number) + " is beyond the test's " + std::to_string(parts_.connections()) +
           " flows";
  if (net_->flow_peers.empty()) {
    net_->flow_peers.resize(parts_.connections());
    flow_fds_.assign(parts_.connections(), -1);
  }
  unsigned char answer[workloads::udp::kHelloSize];
  workloads::udp::write_hello({id_, number}, true, answer);
  if (net_->flow_peers[number]) {
    if (*net_->flow_peers[number] != from) return "flow " + std::to_string(number) + " said hello from a second address";
    (void)::send(flow_fds_[number], answer, sizeof(answer), MSG_DONTWAIT);  // its answer was lost
    return {};
  }
  engines::Worker& worker = part->streams->worker_for(index);
  asio::ip::udp::socket socket(worker.context());
  try {
    const asio::ip::address any = asio::ip::address_v6::any();
    const asio::ip::udp::endpoint local(net_->local.is_unspecified() ? any : net_->local, port);
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
  net_->flow_peers[number] = from;
  flow_fds_[number] = fd;
  (void)::send(fd, answer, sizeof(answer), MSG_DONTWAIT);
  return {};
}

asio::awaitable<bool> ServerTest::run(ServerPeer& peer, report::Reporter& reporter) {
  struct Over {  // on every way out: no more connections are taken, and the workers stop
    ServerTest& test;
    ~Over() {
      test.phase_ = Phase::over;
      test.parts_.stop();
    }
  } over{*this};
  if (peer.gathers_flows()) {  // nothing has arrived yet: the latch counts the flows too from here
    gathers_flows_ = true;
    net_->flows.resize(parts_.connections());
    all_arrived_ = std::make_shared<engines::CompletionLatch>(net_->executor, expected_before_start());
  }
  co_await peer.accept(*this);
  co_await gather(peer);
  open_streams(peer);
  co_await start(peer, reporter);
  co_await wait_for_client(peer);
  co_await finish_streams(peer);
  co_await peer.exchange(parts_);
  co_return report(peer, reporter);
}

std::size_t ServerTest::expected_before_start() const noexcept {
  return connections_before_start(parts_) + (gathers_flows_ ? parts_.connections() : 0);
}

// Every data connection a before-start workload needs (and every flow the peer sets up itself);
// none for one whose connections come later. The client's control connection is watched
// meanwhile: a client that died after its request ends the test at once, not at the arrival limit.
asio::awaitable<void> ServerTest::gather(ServerPeer& peer) {
  using namespace asio::experimental::awaitable_operators;
  auto outcome = co_await (capture(await_arrivals(peer)) || capture(peer.watch_gathering(kArrivalCap + kArrivalLimit)));
  std::visit([](const Captured<void>& ended) {
    if (ended.error) std::rethrow_exception(ended.error);
  }, outcome);
}

asio::awaitable<void> ServerTest::await_arrivals(ServerPeer& peer) {
  const auto give_up = std::chrono::steady_clock::now() + kArrivalCap;
  const auto started = std::chrono::steady_clock::now();
  std::size_t remaining = all_arrived_->remaining();
  for (;;) {
    if (co_await all_arrived_->wait(kArrivalLimit) || all_arrived_->remaining() == 0) co_return;
    const bool progressed = all_arrived_->remaining() < remaining;
    remaining = all_arrived_->remaining();
    if (!progressed || std::chrono::steady_clock::now() >= give_up) break;
  }
  const std::size_t expected = expected_before_start();
  co_await peer.gathering_failed(static_cast<std::uint32_t>(expected - remaining), static_cast<std::uint32_t>(expected),
                                 std::chrono::ceil<std::chrono::seconds>(std::chrono::steady_clock::now() - started));
}

// Each workload's streams on its workers: on the gathered connections and flows, tuned as the
// client asked.
void ServerTest::open_streams(ServerPeer& peer) {
  std::vector<std::string> warnings;
  for (TestPart& part : parts_) open_part(part, peer, warnings);
  net_->sockets.clear();
  net_->flows.clear();
  parts_.front().start.spec.with = request_.spec.with;  // the whole test, as the client's report has it
  for (const std::string& warning : warnings) util::log_warn("{}", warning);
}

void ServerTest::open_part(TestPart& part, ServerPeer& peer, std::vector<std::string>& warnings) {
  const spec::TestSpec& spec = part.spec;
  part.streams = std::make_unique<TestStreams>(net_->executor, part.layout, part.threads, cpus_, spec, Side::server);
  part.streams->number_from(part.first);
  part.start = start_info(spec, request_.client_threads, parts_.threads(), /*from_client=*/false);
  part.start.peer = peer.name();
  part.start.server_cpus = cpus_;
  peer.describe_start(part.start);
  for (std::uint32_t i = 0; i < part.connections(); ++i) {
    std::optional<tcp::socket> socket;
    if (part.before_start()) {
      socket = std::move(*net_->sockets[part.first + i]);
      peer.tune(*socket, spec, part.layout.sends_on(Side::server, i), warnings);
      note_connection(part.start, socket->native_handle());
    }
    part.streams->add(*part.side, i, std::move(socket), {}, {}, id_);
    if (gathers_flows_ && net_->flows[part.first + i]) {
      asio::ip::udp::socket& flow = *net_->flows[part.first + i];
      peer.tune_flow(flow, spec, warnings);
      std::string refused = part.streams->route_flow(*part.side, i, std::move(flow));
      if (!refused.empty()) warnings.push_back(std::move(refused));
    }
  }
  part.side->describe_start(part.start);
  part.streams->start();
}

// The window opens when the streams begin; the client hears of it as its protocol says.
asio::awaitable<void> ServerTest::start(ServerPeer& peer, report::Reporter& reporter) {
  co_await peer.before_window();
  const engines::TestClock clock = peer.clock(request_.spec);
  const auto timestamp = static_cast<std::int64_t>(std::time(nullptr));
  for (TestPart& part : parts_) part.start.timestamp = timestamp;
  TestPart& first = parts_.front();
  parts_.show_live(reporter, Side::server);
  parts_.begin(clock);
  phase_ = Phase::running;  // from now on a during-test workload's connections go to their slots
  co_await peer.window_opened();
  const bool live_forward = first.layout.live_forward();
  reporter.start(direction_start(first.start, first.layout.connections(live_forward),
                                 first.layout.sends(Side::server, live_forward)));
  started_ = true;
}

// Until the client says its part is done (a vanished client ends the test here, with an
// exception, as its control connection closes). Intervals tick meanwhile.
asio::awaitable<void> ServerTest::wait_for_client(ServerPeer& peer) {
  using namespace asio::experimental::awaitable_operators;
  auto outcome =
      co_await (capture(peer.client_done(parts_, request_.spec)) || parts_.sample() || watch_total_rate());
  if (outcome.index() == 2) {
    co_await peer.total_rate_exceeded(std::get<2>(outcome));
    throw TotalRateExceeded(std::get<2>(outcome));
  }
  auto& done = std::get<0>(outcome);
  if (done.error) std::rethrow_exception(done.error);
}

// --server-bitrate-limit: the test's bytes so far, once a step, until the window ends the wait
// (never, without a cap); the sentence that ends the test once they average above the cap.
asio::awaitable<std::string> ServerTest::watch_total_rate() {
  asio::steady_timer timer(net_->executor);
  if (rate_cap_bps_ <= 0) {
    timer.expires_at(asio::steady_timer::time_point::max());
    co_await timer.async_wait(asio::use_awaitable);
  }
  const double step_s = TotalRateCap::step_for(rate_cap_window_s_);
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(step_s));
  TotalRateCap cap(rate_cap_bps_, rate_cap_window_s_, step_s);
  timer.expires_after(step);
  for (;;) {
    co_await timer.async_wait(asio::use_awaitable);
    timer.expires_at(timer.expiry() + step);
    const auto [received, sent] = bytes_so_far();
    if (std::string exceeded = cap.sample(received + sent); !exceeded.empty()) co_return exceeded;
  }
}

// Every stream reaches its end as far as the peer waits for it, so the counts are final; then the
// workers stop.
asio::awaitable<void> ServerTest::finish_streams(ServerPeer& peer) {
  parts_.end_window();
  co_await peer.conclude(parts_);
  phase_ = Phase::over;
  for (TestPart& part : parts_) {
    part.mine = part.streams->measurement().finish(Side::server);
    part.mine->forward.tests_beside = tests_beside_;
    if (part.mine->reverse) part.mine->reverse->tests_beside = tests_beside_;
  }
  parts_.stop();
}

// The server's own report: its figures, and the client's beside them, for every workload.
bool ServerTest::report(ServerPeer& peer, report::Reporter& reporter) {
  std::vector<report::TestReport> reports;
  bool clean = true;
  for (TestPart& part : parts_) {
    report::TestReport report = peer.side_by_side(part);
    part.side->add_to_report(report);
    for (const report::TestReport* direction : {static_cast<const report::TestReport*>(&report), report.bidir_reverse.get()})
      if (direction && (stats::summarize(direction->local().totals).failed_streams || !direction->mismatched_streams.empty()))
        clean = false;
    reports.push_back(std::move(report));
  }
  reported_ = true;
  report::TestReport whole = TestParts::joined(std::move(reports));
  whole.diagnosis = diagnosis::diagnose(whole);
  reporter.end(whole);
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

}  // namespace testio::lifecycle
