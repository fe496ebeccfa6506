// A testio client's test on the server, from its control connection: the request and its key,
// the caps it must keep (per test, per address, across the server), its wait in the queue when
// every slot is taken, and the test through its lifecycle (ServerTest) with its own report.
#include <malloc.h>

#include <cstdio>
#include <random>

#include <asio/experimental/awaitable_operators.hpp>
#include <nlohmann/json.hpp>

#include "protocols/testio/auth.hpp"
#include "engines/bulk_streams.hpp"
#include "server/server.hpp"

#include "protocols/testio/server_peer.hpp"
#include "lifecycle/start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::server {

using lifecycle::check_descriptors;
using lifecycle::ServerPeer;
using lifecycle::TestPart;
using lifecycle::TestParts;
namespace {

using asio::ip::tcp;
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

}  // namespace


void check_request(const spec::TestSpec& spec, const spec::Limits& limits) {
  try {
    workloads::check(spec, limits);
  } catch (const spec::SpecError& error) {
    throw control::ProtocolError(std::string("invalid test request: ") + error.what());
  }
}

std::uint64_t Server::new_test_id() {
  // The id is what lets a data connection join a test: unguessable, so nobody else's can.
  static std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t id = 0;
  while (id == 0 || tests_.count(id)) id = generator();
  return id;
}

void Server::note_concurrency() noexcept {
  std::uint32_t beside = tests_.empty() ? 0 : static_cast<std::uint32_t>(tests_.size() - 1);
  for (auto& [id, test] : tests_) test->note_tests_beside(beside);
}

asio::awaitable<control::TestRequest> Server::read_request(control::ControlChannel& control) {
  control::ServerHello hello;
  hello.server_version = TESTIO_VERSION;
  if (key_) {
    hello.auth = "hmac-sha256";
    hello.nonce = control::make_nonce();
  }
  co_await control.write(control::to_json(hello));
  const auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(config_.limits.handshake_timeout_s, 1.0)));
  nlohmann::json message = co_await control.read(limit);
  control::TestRequest request;
  try {
    request = control::parse_test_request(message);
  } catch (const control::ProtocolError& error) {
    throw control::ProtocolError(std::string("invalid test request: ") + error.what());
  }
  // The key first: a client without it learns nothing of what this server accepts.
  if (key_ && !control::auth_matches(control::auth_response(*key_, hello.nonce), request.auth))
    throw control::AuthError(request.auth.empty() ? "authentication failed: this server requires a key (--psk-file)"
                                                  : "authentication failed: wrong key");
  check_request(request.spec, config_.limits);
  co_return request;
}

// The caps a request meets before it may run or wait: empty when it meets none.
std::string Server::cap_refusal(const asio::ip::address& peer, std::uint64_t connections) const {
  const spec::Limits& limits = config_.limits;
  const std::uint32_t per_peer = limits.max_tests_per_peer;
  if (auto held = tests_per_peer_.find(peer); per_peer && held != tests_per_peer_.end() && held->second >= per_peer)
    return "this address already has " + tests_text(held->second) + " running or waiting here, the server's cap " +
           "(--max-tests-per-peer " + std::to_string(per_peer) + ")";
  if (limits.max_server_connections && connections > limits.max_server_connections)
    return "the test's " + std::to_string(connections) + " connections are more than the server takes across all " +
           "its tests (--max-server-connections " + std::to_string(limits.max_server_connections) + ")";
  return {};
}

// The sentence a client is turned away with when no slot is free and it may not wait.
std::string Server::busy_refusal() const {
  std::string busy = "the server is busy running " + tests_text(slots_.taken());
  if (slots_.held_by_connections())
    busy += ", whose " + std::to_string(slots_.connections()) + " connections leave too few of its " +
            std::to_string(config_.limits.max_server_connections) + " (--max-server-connections)";
  if (!config_.limits.queue) return busy + ", and keeps no queue (--queue 0 on the server)";
  if (slots_.queue_full())
    return busy + ", and its queue of " + std::to_string(config_.limits.queue) + " is full (--queue on the server)";
  return busy + "; wait for a slot with --max-wait";
}

// A slot for the request's test: at once, or after a wait in the queue that the client hears of.
// Empty when the slot is held; otherwise why not (the client is told the sentence returned).
asio::awaitable<std::string> Server::take_slot(control::ControlChannel& control, Admission& admission) {
  using namespace asio::experimental::awaitable_operators;
  const double max_wait_s = admission.request.max_wait_s;
  auto hold = [&] { admission.slot = std::make_unique<TestSlots::Held>(slots_, admission.connections); };
  if (slots_.try_take(admission.connections)) {
    hold();
    co_return std::string();
  }
  const std::string stopping = "the server is stopping";
  if (slots_.closed()) co_return stopping;
  if (!config_.limits.queue || slots_.queue_full() || max_wait_s <= 0) {
    slots_.count_busy();
    co_return busy_refusal();
  }
  TestSlots::Place place(slots_, io_.get_executor(), admission.connections);
  spdlog::info("{} waits: {} ahead", admission.who, tests_text(place.ahead()));
  const auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(max_wait_s));
  // The client may leave, or stop, while it waits: its heartbeats say it is there.
  std::string left;
  try {
    co_await control.write(control::queued_message(place.ahead()));
    auto outcome = co_await (place.wait(limit) || control::capture(control.read(limit + 5s)));
    if (outcome.index() == 1) {
      auto& read = std::get<1>(outcome);
      if (read.error) std::rethrow_exception(read.error);
      control::fail_unexpected(*read.value, "while waiting in the queue");
    }
  } catch (const std::exception& error) {
    left = "it left the queue: " + std::string(error.what());
  }
  if (!left.empty()) co_return left;
  if (place.claim()) {
    hold();
    co_return std::string();
  }
  if (slots_.closed()) co_return stopping;
  slots_.count_busy();
  co_return "the server stayed busy for " + seconds_text(max_wait_s) + " (the client's --max-wait)";
}

// The request, its caps and its slot: the test may run once this returns one. A refusal is sent,
// counted and logged here.
asio::awaitable<std::optional<Server::Admission>> Server::admit_request(control::ControlChannel& control,
                                                                      const std::string& peer) {
  Admission admission;
  std::string failure;
  std::string code = "failed";
  try {
    admission.request = co_await read_request(control);
    admission.arrived_ns = stats::realtime_ns();
  } catch (const control::AuthError& error) {
    failure = error.what(), code = "auth";
    reporter_.refused(metrics::Refusal::auth);
  } catch (const control::ProtocolError& error) {
    failure = error.what();
    reporter_.refused(metrics::Refusal::invalid);
  } catch (const std::system_error& error) {
    failure = "the client went away (" + error.code().message() + ")", code.clear();
  } catch (const std::exception& error) {
    failure = error.what();
    reporter_.refused(metrics::Refusal::invalid);
  }
  if (!failure.empty()) {
    spdlog::warn("test from {} ended: {}", peer, failure);
    if (!code.empty()) co_await control::send_error(control, failure, code);
    if (config_.one_off) {  // -1's one test was this request
      exit_code_ = 1;
      stop();
    }
    co_return std::nullopt;
  }
  control.keep_alive(stall_limit());
  asio::error_code ignored;
  admission.peer = control.socket().remote_endpoint(ignored).address();
  admission.connections = connections_of(admission.request.spec);
  admission.report = reporter_.test_report(peer);
  admission.who = "test #" + std::to_string(admission.report->number()) + " from " + peer;
  spdlog::info("{}: {}", admission.who, workloads::describe(admission.request.spec));
  if (std::string refusal = cap_refusal(admission.peer, admission.connections); !refusal.empty()) {
    spdlog::info("refused {}: {}", admission.who, refusal);
    reporter_.refused(metrics::Refusal::cap);
    co_await control::send_error(control, refusal, "refused");
    co_return std::nullopt;
  }
  admission.counted = std::make_unique<PeerTests>(*this, admission.peer);
  std::string refusal = co_await take_slot(control, admission);
  if (!refusal.empty()) {
    spdlog::info("refused {}: {}", admission.who, refusal);
    co_await control::send_error(control, refusal, "busy");
    co_return std::nullopt;
  }
  co_return admission;
}

std::chrono::steady_clock::duration Server::stall_limit() const {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(config_.stall_timeout_s));
}

std::shared_ptr<ServerTest> Server::admit(control::TestRequest request, const asio::ip::address& peer,
                                          const asio::ip::address& local) {
  workloads::ServerResources resources;
  resources.served_file = served_file_ ? &*served_file_ : nullptr;
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
  std::vector<std::uint32_t> cpus = config_.spec.cpus.empty() ? spec.cpus : config_.spec.cpus;
  auto test = std::make_shared<ServerTest>(io_.get_executor(), new_test_id(), std::move(request), std::move(parts),
                                           std::move(cpus), peer, local);
  test->cap_total_rate(config_.limits.max_total_rate_bps, config_.limits.total_rate_window_s);
  tests_.emplace(test->id(), test);
  note_concurrency();
  return test;
}

asio::awaitable<void> Server::handle_control(tcp::socket socket) {
  control::ControlChannel control(std::move(socket), config_.limits.max_frame);
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
    const std::unique_ptr<ServerPeer> client = control::testio_server_peer(control);
    succeeded = co_await test->run(*client, report);
    spdlog::info("{} finished", admission->who);
  } catch (const control::PeerError& error) {
    ended = std::string("the client ended the test: ") + error.what();
  } catch (const std::system_error& error) {
    ended = "the client went away (" + error.code().message() + ")";
  } catch (const control::ProtocolError& error) {
    ended = failure = error.what();
  } catch (const std::exception& error) {
    ended = failure = error.what();
    if (!id) reporter_.refused(metrics::Refusal::unsupported);  // the workload or the engine cannot run it here
  }
  if (id) reporter_.served(metrics::Protocol::testio, succeeded);
  if (test && !test->reported()) {
    auto [received, sent] = test->bytes_so_far();
    reporter_.count_unreported(received, sent);
  }
  if (!ended.empty()) {
    spdlog::warn("{} ended: {}", admission->who, ended);
    if (id) report.error(ended);  // only a test that got under way has a report to close
  }
  if (!failure.empty()) co_await control::send_error(control, failure, code);
  tests_.erase(id);
  test.reset();
  // What the test's control thread allocated (intervals, frames) goes back to the kernel too.
  if (tests_.empty()) ::malloc_trim(0);
  if (config_.one_off) {
    exit_code_ = succeeded ? 0 : 1;
    stop();
  }
}

}  // namespace testio::server
