// testio's server side. Its door: a testio client's test, from its control connection (the
// request and its key, the caps it must keep per test, per address and across the server, its wait
// in the queue when every slot is taken, and the test through its lifecycle with its own report),
// and each data connection joined to its test. Its server peer: what the lifecycle asks a testio
// client (ServerPeer).
#include "protocols/testio/door.hpp"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <random>

#include <asio/awaitable.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "engines/bulk_streams.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "lifecycle/start.hpp"
#include "protocols/testio/auth.hpp"
#include "protocols/testio/channel.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::control {
namespace {

using asio::ip::tcp;
using lifecycle::check_descriptors;
using lifecycle::ServerPeer;
using lifecycle::ServerTest;
using lifecycle::TestPart;
using lifecycle::TestParts;
using namespace std::chrono_literals;

std::string tests_text(std::uint64_t count) { return std::to_string(count) + (count == 1 ? " test" : " tests"); }

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

// Every data connection (or flow, or transfer slot) of every workload of the test.
std::uint64_t connections_of(const spec::TestSpec& spec) {
  std::uint64_t total = 0;
  for (const spec::TestSpec& part : spec::workloads_of(spec)) total += part.data_connections();
  return total;
}

// The error frame `code` with `message`, best effort: the peer may already be gone, and the
// reason is logged on this side anyway.
asio::awaitable<void> send_error(ControlChannel& control, const std::string& message, const std::string& code) {
  try {
    co_await control.write(error_message(message, code));
  } catch (const std::exception&) {
  }
}

constexpr auto kIdleClientGrace = 60s;  // beyond -O + -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;       // from the client's figures to the end of every stream

// A testio client as the server's peer: test_accepted, `start` once the window opened, the
// client's done frame (a `stop` before it ends this side's windows early), and the results frames
// both ways.
class TestioServerPeer final : public ServerPeer {
 public:
  explicit TestioServerPeer(ControlChannel& control) : control_(control) {}

  std::string name() const override { return control_.peer(); }
  asio::awaitable<void> accept(const ServerTest& test) override;
  asio::awaitable<void> watch_gathering(std::chrono::steady_clock::duration limit) override {
    nlohmann::json message = co_await control_.read(limit);  // past the heartbeats
    fail_unexpected(message, "before the test started");
  }
  asio::awaitable<void> window_opened() override { co_await control_.write(start_message()); }
  asio::awaitable<void> client_done(TestParts& parts, const spec::TestSpec& spec) override;
  asio::awaitable<void> exchange(TestParts& parts) override;
  // The streams stay open until the client has read the sentence and gone (or 2 s, whatever it
  // sends meanwhile): a stream that ended first would be what it reported.
  asio::awaitable<void> total_rate_exceeded(const std::string& why) override {
    co_await send_error(control_, why, "failed");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    try {
      while (std::chrono::steady_clock::now() < deadline)
        (void)co_await control_.read(deadline - std::chrono::steady_clock::now());
    } catch (const std::exception&) {  // it went (end of file), or the wait is over
    }
  }

 private:
  ControlChannel& control_;
};

asio::awaitable<void> TestioServerPeer::accept(const ServerTest& test) {
  TestAccepted accepted;
  accepted.test_id = test.id();
  accepted.server_threads = test.threads();
  accepted.server_cpus = test.cpus();
  accepted.server_version = TESTIO_VERSION;
  accepted.server_received_ns = test.request_arrived_ns();
  accepted.server_clock_ns = stats::realtime_ns();
  co_await control_.write(to_json(accepted));
}

// The client sends its first workload's figures once its streams are done (a vanished client ends
// the test here, with an exception, as its control connection closes). A stop before that (the
// client's SIGINT) ends this side's windows early.
asio::awaitable<void> TestioServerPeer::client_done(TestParts& parts, const spec::TestSpec& spec) {
  TestPart& first = parts.front();
  control_.allow_frames_up_to(figures_frame_bound(first.connections(), 0));  // totals only, no intervals
  for (;;) {
    nlohmann::json message = co_await control_.read(engines::run_limit(spec, kIdleClientGrace));
    if (!is_stop(message)) {
      first.theirs = parse_directed_results(message, first.side->done_message(), first.layout.forward,
                                                     first.layout.reverse);
      co_return;
    }
    parts.end_window();
  }
}

// Our figures for each workload, in order; the client's for every workload after the first come
// as the answer to the one before.
asio::awaitable<void> TestioServerPeer::exchange(TestParts& parts) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    TestPart& part = parts[k];
    if (k > 0) {
      control_.allow_frames_up_to(figures_frame_bound(part.connections(), 0));
      nlohmann::json message = co_await control_.read(kDrainLimit);
      part.theirs = parse_directed_results(message, part.side->done_message(), part.layout.forward,
                                                    part.layout.reverse);
    }
    co_await control_.write(to_json(*part.mine, "results"));
  }
}

}  // namespace

// A testio client's test, counted against its address's cap from its request to its end.
class TestioDoor::PeerTests {
 public:
  PeerTests(TestioDoor& door, asio::ip::address peer)
      : counts_(*door.tests_per_peer_), alive_(door.alive_), peer_(std::move(peer)) {
    ++counts_[peer_];
  }
  ~PeerTests() {
    if (alive_.expired()) return;  // at the server's exit, a test's frame goes after it
    if (--counts_[peer_] == 0) counts_.erase(peer_);
  }
  PeerTests(const PeerTests&) = delete;
  PeerTests& operator=(const PeerTests&) = delete;

 private:
  std::map<asio::ip::address, std::uint32_t>& counts_;
  std::weak_ptr<bool> alive_;
  asio::ip::address peer_;
};

struct TestioDoor::Admission {
  TestRequest request;
  std::uint64_t arrived_ns = 0;  // when the request arrived (CLOCK_REALTIME), for the clocks' offset
  asio::ip::address peer;
  std::uint64_t connections = 0;
  std::unique_ptr<metrics::ServedTestReport> report;  // its own, numbered
  std::string who;                                    // "test #7 from 192.0.2.5:41234", for the log
  std::unique_ptr<PeerTests> counted;
  std::unique_ptr<lifecycle::TestSlots::Held> slot;  // from when it is granted
};

TestioDoor::TestioDoor(Server server)
    : server_(std::move(server)), tests_per_peer_(std::make_unique<std::map<asio::ip::address, std::uint32_t>>()) {
  const config::Config& config = server_.config;
  if (!config.file.empty()) served_file_.emplace(config.file);
  if (!config.psk_file.empty()) {
    bool readable_by_others = false;
    key_ = load_psk(config.psk_file, readable_by_others);
    if (readable_by_others)
      util::log_warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
  }
}

TestioDoor::~TestioDoor() = default;

lifecycle::ServerTest* TestioDoor::find(std::uint64_t id) const {
  auto test = tests_.find(id);
  return test == tests_.end() ? nullptr : test->second.get();
}

std::uint64_t TestioDoor::data_connections_of(const asio::ip::address& peer) const {
  std::uint64_t connections = 0;
  for (const auto& [id, test] : tests_)
    if (test->peer() == peer) connections += test->data_connections();
  return connections;
}

std::pair<std::uint64_t, std::uint64_t> TestioDoor::bytes_so_far() const {
  std::pair<std::uint64_t, std::uint64_t> total{};
  for (const auto& [id, test] : tests_) {
    auto [received, sent] = test->bytes_so_far();
    total.first += received;
    total.second += sent;
  }
  return total;
}

asio::awaitable<void> TestioDoor::enter(tcp::socket socket, const DecodedPreamble& decoded, const std::string& peer) {
  switch (decoded.status) {
    case DecodedPreamble::Status::ok:
      break;
    case DecodedPreamble::Status::bad_version: {
      std::string message = "the client speaks testio protocol version " + std::to_string(decoded.preamble.version) +
                            " and this server version " + std::to_string(kProtocolVersion) +
                            ": run the same testio release on both";
      util::log_warn("connection from {}: {}", peer, message);
      server_.reporter.refused(metrics::Refusal::version);
      ControlChannel control(std::move(socket), server_.config.limits.max_frame);
      co_await send_error(control, message, "version");
      co_return;
    }
    case DecodedPreamble::Status::bad_kind:
    case DecodedPreamble::Status::not_testio:
      server_.log.warn("preamble", "connection from " + peer + " sent a malformed preamble; closed");
      co_return;
  }
  if (decoded.preamble.kind == ConnectionKind::data)
    handle_data(std::move(socket), decoded.preamble, peer);
  else
    co_await handle_control(std::move(socket));
}

void check_request(const spec::TestSpec& spec, const spec::Limits& limits) {
  try {
    workloads::check(spec, limits);
  } catch (const spec::SpecError& error) {
    throw ProtocolError(std::string("invalid test request: ") + error.what());
  }
}

std::uint64_t TestioDoor::new_test_id() {
  // The id is what lets a data connection join a test: unguessable, so nobody else's can.
  static std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t id = 0;
  while (id == 0 || tests_.count(id)) id = generator();
  return id;
}

void TestioDoor::note_concurrency() noexcept {
  std::uint32_t beside = tests_.empty() ? 0 : static_cast<std::uint32_t>(tests_.size() - 1);
  for (auto& [id, test] : tests_) test->note_tests_beside(beside);
}

asio::awaitable<TestRequest> TestioDoor::read_request(ControlChannel& control) {
  ServerHello hello;
  hello.server_version = TESTIO_VERSION;
  if (key_) {
    hello.auth = "hmac-sha256";
    hello.nonce = make_nonce();
  }
  co_await control.write(to_json(hello));
  const auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(server_.config.limits.handshake_timeout_s, 1.0)));
  nlohmann::json message = co_await control.read(limit);
  TestRequest request;
  try {
    request = parse_test_request(message);
  } catch (const ProtocolError& error) {
    throw ProtocolError(std::string("invalid test request: ") + error.what());
  }
  // The key first: a client without it learns nothing of what this server accepts.
  if (key_ && !auth_matches(auth_response(*key_, hello.nonce), request.auth))
    throw AuthError(request.auth.empty() ? "authentication failed: this server requires a key (--psk-file)"
                                                  : "authentication failed: wrong key");
  check_request(request.spec, server_.config.limits);
  co_return request;
}

// The caps a request meets before it may run or wait: empty when it meets none.
std::string TestioDoor::cap_refusal(const asio::ip::address& peer, std::uint64_t connections) const {
  const spec::Limits& limits = server_.config.limits;
  const std::uint32_t per_peer = limits.max_tests_per_peer;
  if (auto held = tests_per_peer_->find(peer); per_peer && held != tests_per_peer_->end() && held->second >= per_peer)
    return "this address already has " + tests_text(held->second) + " running or waiting here, the server's cap " +
           "(--max-tests-per-peer " + std::to_string(per_peer) + ")";
  if (limits.max_server_connections && connections > limits.max_server_connections)
    return "the test's " + std::to_string(connections) + " connections are more than the server takes across all " +
           "its tests (--max-server-connections " + std::to_string(limits.max_server_connections) + ")";
  return {};
}

// The sentence a client is turned away with when no slot is free and it may not wait.
std::string TestioDoor::busy_refusal() const {
  std::string busy = "the server is busy running " + tests_text(server_.slots.taken());
  if (server_.slots.held_by_connections())
    busy += ", whose " + std::to_string(server_.slots.connections()) + " connections leave too few of its " +
            std::to_string(server_.config.limits.max_server_connections) + " (--max-server-connections)";
  if (!server_.config.limits.queue) return busy + ", and keeps no queue (--queue 0 on the server)";
  if (server_.slots.queue_full())
    return busy + ", and its queue of " + std::to_string(server_.config.limits.queue) + " is full (--queue on the server)";
  return busy + "; wait for a slot with --max-wait";
}

// A slot for the request's test: at once, or after a wait in the queue that the client hears of.
// Empty when the slot is held; otherwise why not (the client is told the sentence returned).
asio::awaitable<std::string> TestioDoor::take_slot(ControlChannel& control, Admission& admission) {
  using namespace asio::experimental::awaitable_operators;
  const double max_wait_s = admission.request.max_wait_s;
  auto hold = [&] { admission.slot = std::make_unique<lifecycle::TestSlots::Held>(server_.slots, admission.connections); };
  if (server_.slots.try_take(admission.connections)) {
    hold();
    co_return std::string();
  }
  const std::string stopping = "the server is stopping";
  if (server_.slots.closed()) co_return stopping;
  if (!server_.config.limits.queue || server_.slots.queue_full() || max_wait_s <= 0) {
    server_.slots.count_busy();
    co_return busy_refusal();
  }
  lifecycle::TestSlots::Place place(server_.slots, server_.io.get_executor(), admission.connections);
  util::log_info("{} waits: {} ahead", admission.who, tests_text(place.ahead()));
  const auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(max_wait_s));
  // The client may leave, or stop, while it waits: its heartbeats say it is there.
  std::string left;
  try {
    co_await control.write(queued_message(place.ahead()));
    auto outcome = co_await (place.wait(limit) || capture(control.read(limit + 5s)));
    if (outcome.index() == 1) {
      auto& read = std::get<1>(outcome);
      if (read.error) std::rethrow_exception(read.error);
      fail_unexpected(*read.value, "while waiting in the queue");
    }
  } catch (const std::exception& error) {
    left = "it left the queue: " + std::string(error.what());
  }
  if (!left.empty()) co_return left;
  if (place.claim()) {
    hold();
    co_return std::string();
  }
  if (server_.slots.closed()) co_return stopping;
  server_.slots.count_busy();
  co_return "the server stayed busy for " + seconds_text(max_wait_s) + " (the client's --max-wait)";
}

// The request, its caps and its slot: the test may run once this returns one. A refusal is sent,
// counted and logged here.
asio::awaitable<std::optional<TestioDoor::Admission>> TestioDoor::admit_request(ControlChannel& control,
                                                                      const std::string& peer) {
  Admission admission;
  std::string failure;
  std::string code = "failed";
  try {
    admission.request = co_await read_request(control);
    admission.arrived_ns = stats::realtime_ns();
  } catch (const AuthError& error) {
    failure = error.what(), code = "auth";
    server_.reporter.refused(metrics::Refusal::auth);
  } catch (const ProtocolError& error) {
    failure = error.what();
    server_.reporter.refused(metrics::Refusal::invalid);
  } catch (const std::system_error& error) {
    failure = "the client went away (" + error.code().message() + ")", code.clear();
  } catch (const std::exception& error) {
    failure = error.what();
    server_.reporter.refused(metrics::Refusal::invalid);
  }
  if (!failure.empty()) {
    util::log_warn("test from {} ended: {}", peer, failure);
    if (!code.empty()) co_await send_error(control, failure, code);
    if (server_.config.one_off) server_.one_off_ended(1);  // -1's one test was this request
    co_return std::nullopt;
  }
  control.keep_alive(stall_limit());
  asio::error_code ignored;
  admission.peer = control.socket().remote_endpoint(ignored).address();
  admission.connections = connections_of(admission.request.spec);
  admission.report = server_.reporter.test_report(peer);
  admission.who = "test #" + std::to_string(admission.report->number()) + " from " + peer;
  util::log_info("{}: {}", admission.who, workloads::describe(admission.request.spec));
  if (std::string refusal = cap_refusal(admission.peer, admission.connections); !refusal.empty()) {
    util::log_info("refused {}: {}", admission.who, refusal);
    server_.reporter.refused(metrics::Refusal::cap);
    co_await send_error(control, refusal, "refused");
    co_return std::nullopt;
  }
  admission.counted = std::make_unique<PeerTests>(*this, admission.peer);
  std::string refusal = co_await take_slot(control, admission);
  if (!refusal.empty()) {
    util::log_info("refused {}: {}", admission.who, refusal);
    co_await send_error(control, refusal, "busy");
    co_return std::nullopt;
  }
  co_return admission;
}

std::chrono::steady_clock::duration TestioDoor::stall_limit() const {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(server_.config.stall_timeout_s));
}

std::shared_ptr<ServerTest> TestioDoor::admit(TestRequest request, const asio::ip::address& peer,
                                          const asio::ip::address& local) {
  workloads::ServerResources resources;
  resources.served_file = served_file_ ? &*served_file_ : nullptr;
  resources.udp_port = server_.udp_port();
  if (std::string why = engines::settle_default_engine(request.spec); !why.empty())
    util::log_info("test from {} runs asio, not the client's default io_uring: {}", peer.to_string(), why);
  TestParts parts(request.spec, [&](std::size_t, const spec::TestSpec& spec) {
    return workloads::of(spec).server(spec, resources);
  });
  // A server that cannot run the engine asked for says so instead of accepting.
  for (const TestPart& part : parts) {
    const bool zerocopy_sends = part.layout.reverse && part.spec.send_mode == spec::SendMode::zerocopy;
    if (std::string reason = engines::unusable_reason(part.spec.engine, zerocopy_sends); !reason.empty())
      throw std::runtime_error(reason);
    check_descriptors(part.spec, part.layout, workloads::Side::server, part.threads);
  }
  const spec::TestSpec& spec = request.spec;
  std::vector<std::uint32_t> cpus = server_.config.spec.cpus.empty() ? spec.cpus : server_.config.spec.cpus;
  auto test = std::make_shared<ServerTest>(server_.io.get_executor(), new_test_id(), std::move(request), std::move(parts),
                                           std::move(cpus), peer, local);
  test->cap_total_rate(server_.config.limits.max_total_rate_bps, server_.config.limits.total_rate_window_s);
  tests_.emplace(test->id(), test);
  note_concurrency();
  return test;
}

asio::awaitable<void> TestioDoor::handle_control(tcp::socket socket) {
  ControlChannel control(std::move(socket), server_.config.limits.max_frame);
  const std::string peer = control.peer();
  std::optional<Admission> admission = co_await admit_request(control, peer);
  if (!admission) co_return;
  metrics::ServedTestReport& report = *admission->report;
  bool succeeded = false;
  std::uint64_t id = 0;
  std::string ended;    // why the test ended early, for the log and the report
  std::string failure;  // sent to the client after the catch: no co_await inside a handler
  std::string code = "failed";
  std::shared_ptr<ServerTest> test;
  try {
    asio::error_code ignored;
    test = admit(std::move(admission->request), admission->peer, control.socket().local_endpoint(ignored).address());
    id = test->id();
    test->note_request_arrival(admission->arrived_ns);
    const std::unique_ptr<ServerPeer> client = std::make_unique<TestioServerPeer>(control);
    succeeded = co_await test->run(*client, report);
    util::log_info("{} finished", admission->who);
  } catch (const PeerError& error) {
    ended = std::string("the client ended the test: ") + error.what();
  } catch (const std::system_error& error) {
    ended = "the client went away (" + error.code().message() + ")";
  } catch (const ProtocolError& error) {
    ended = failure = error.what();
  } catch (const std::exception& error) {
    ended = failure = error.what();
    if (!id) server_.reporter.refused(metrics::Refusal::unsupported);  // the workload or the engine cannot run it here
  }
  if (id) server_.reporter.served(metrics::Protocol::testio, succeeded);
  if (test && !test->reported()) {
    auto [received, sent] = test->bytes_so_far();
    server_.reporter.count_unreported(received, sent);
  }
  if (!ended.empty()) {
    util::log_warn("{} ended: {}", admission->who, ended);
    if (id) report.error(ended);  // only a test that got under way has a report to close
  }
  if (!failure.empty()) co_await send_error(control, failure, code);
  tests_.erase(id);
  test.reset();
  // What the test's control thread allocated (intervals, frames) goes back to the kernel too.
  if (tests_.empty()) ::malloc_trim(0);
  if (server_.config.one_off) server_.one_off_ended(succeeded ? 0 : 1);
}

void TestioDoor::handle_data(tcp::socket socket, const Preamble& preamble, const std::string& peer) {
  auto test = tests_.find(preamble.test_id);
  if (test == tests_.end()) {
    server_.log.warn("unknown test", "data connection from " + peer + " names an unknown test; closed");
    return;
  }
  std::string refusal = test->second->attach(preamble.stream, std::move(socket));
  if (!refusal.empty()) server_.log.warn("data refused", "data connection from " + peer + ": " + refusal + "; closed");
}

}  // namespace testio::control
