#include "server/server.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <random>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>
#include <malloc.h>
#include <nlohmann/json.hpp>

#include "engines/bulk_streams.hpp"
#include "lifecycle/start.hpp"
#include "metrics/http_listener.hpp"
#include "net/mptcp.hpp"
#include "net/socket_options.hpp"
#include "protocols/testio/auth.hpp"
#include "protocols/testio/channel.hpp"
#include "protocols/testio/framing.hpp"
#include "protocols/testio/server_peer.hpp"
#include "server/listen.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"
#include "workloads/registry.hpp"

namespace testio::server {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

std::string peer_of(const tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : control::endpoint_text(endpoint);
}

}  // namespace

Server::Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
               ForeignClients* foreign)
    : io_(io),
      config_(config),
      reporter_(metrics),
      acceptor_(open_acceptor(io, config)),
      allowed_(net::AccessList::parse(config.allow)),
      foreign_(foreign),
      slots_(config.limits.max_tests, config.limits.max_server_connections, config.limits.queue),
      log_(io.get_executor()),
      udp_door_(io, acceptor_.local_endpoint(), config, allowed_,
                [this](std::uint64_t id) {
                  auto test = tests_.find(id);
                  return test == tests_.end() ? nullptr : test->second.get();
                },
                foreign, log_) {
  if (!config.file.empty()) served_file_.emplace(config.file);
  if (!config.psk_file.empty()) {
    bool readable_by_others = false;
    key_ = control::load_psk(config.psk_file, readable_by_others);
    if (readable_by_others)
      util::log_warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
  }
}

void Server::stop() noexcept {
  asio::error_code ignored;
  slots_.close();  // the tests waiting are told, and none starts from here on
  acceptor_.close(ignored);
  udp_door_.close();
  if (foreign_) foreign_->stop();
}

asio::awaitable<void> Server::serve() {
  const std::string endpoint = control::endpoint_text(acceptor_.local_endpoint());
  util::log_info("{}", foreign_ ? foreign_->listening(endpoint) : "listening on " + endpoint);
  // A peer whose every connection is a whole test takes one connection with -1.
  const bool one_connection = config_.one_off && foreign_ && foreign_->takes_every_connection();
  if (udp_door_.open()) asio::co_spawn(io_, udp_door_.serve(), asio::detached);
  for (;;) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (error) {
      // EMFILE and friends: say so, back off a moment, keep serving.
      log_.warn("accept", "accept failed: " + error.message());
      asio::steady_timer pause(io_, 100ms);
      co_await pause.async_wait(asio::use_awaitable);
      continue;
    }
    asio::error_code ec;
    tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) continue;  // already gone
    reporter_.accepted();
    if (!allowed_.allows(peer.address())) {
      reporter_.refused(metrics::Refusal::not_allowed);
      log_.warn("allow", "refused a connection from " + control::endpoint_text(peer) + ": not in --allow");
      continue;  // the socket closes as it goes out of scope
    }
    if (!admit_at_the_door(socket, peer)) continue;
    if (one_connection) {  // no other is accepted; the server stops once it is served
      acceptor_.close(error);
      co_await handle_connection(std::move(socket));
      co_return;
    }
    asio::co_spawn(io_, handle_connection(std::move(socket)), asio::detached);
  }
}

bool Server::admit_at_the_door(tcp::socket& socket, const tcp::endpoint& peer) {
  const spec::Limits& limits = config_.limits;
  if (handshakes_.total() >= limits.max_pending) {
    const std::string refusal = std::to_string(handshakes_.total()) + " connections are already in their handshake";
    log_.warn("door", "refused a connection from " + control::endpoint_text(peer) + ": " + refusal);
    reporter_.refused(metrics::Refusal::handshakes);
    answer_at_the_door(socket, refusal);
    return false;
  }
  // A peer running a test here may open as many as its test has connections, and a few more.
  std::uint64_t allowance = limits.max_pending_per_peer;
  for (const auto& [id, test] : tests_)
    if (test->peer() == peer.address()) allowance += test->data_connections();
  const std::uint32_t held = handshakes_.held_by(peer.address());
  if (held < allowance) return true;
  tcp::socket* oldest_idle = handshakes_.evict_oldest_idle(peer.address());
  if (!oldest_idle) return true;  // every one has its bytes in, and finishes as soon as it is read
  const std::string limit = "--max-pending-per-peer " + std::to_string(limits.max_pending_per_peer);
  log_.warn("door", "closed the oldest idle one of " + std::to_string(held) + " handshakes from " +
                        control::address_text(peer.address()) + " for a newer one (" + limit + ")");
  answer_at_the_door(*oldest_idle, std::to_string(held) + " connections from this address are in their handshake (" +
                                       limit + "); the oldest idle one is closed");
  asio::error_code ignored;
  oldest_idle->close(ignored);  // its coroutine's read ends with operation_aborted
  return true;
}

void Server::answer_at_the_door(tcp::socket& socket, const std::string& refusal) noexcept {
  // One short frame, written without waiting (it fits any empty socket buffer), then the close:
  // a refused connection costs this server nothing more.
  const std::string frame = control::encode_frame(control::error_message(refusal, "refused"));
  asio::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.send(asio::buffer(frame), 0, ignored);
}

asio::awaitable<void> Server::serve_foreign(tcp::socket socket, std::array<unsigned char, 4> first,
                                           std::chrono::steady_clock::duration handshake_limit) {
  std::optional<bool> succeeded = co_await foreign_->serve(std::move(socket), first, slots_, handshake_limit);
  if (succeeded) reporter_.served(foreign_->protocol(), *succeeded);
  if (succeeded && config_.one_off) {
    exit_code_ = *succeeded ? 0 : 1;
    stop();
  }
}

asio::awaitable<void> Server::handle_connection(tcp::socket socket) {
  const std::string peer = peer_of(socket);
  const auto handshake_limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(config_.limits.handshake_timeout_s));
  if (foreign_ && foreign_->takes_every_connection()) {
    co_await serve_foreign(std::move(socket), {}, handshake_limit);
    co_return;
  }
  asio::error_code ec;
  Handshakes::Ticket handshake(handshakes_, socket.remote_endpoint(ec).address(), socket);
  try {
    control::PreambleBytes bytes{};
    // The magic first, so a client speaking something else is told apart without waiting for
    // bytes it will never send. One deadline covers the whole preamble, so trickling does not help.
    co_await control::within(
        asio::async_read(socket, asio::buffer(bytes.data(), control::kMagic.size()), asio::use_awaitable),
        handshake_limit, "waiting for the connection preamble");
    if (!control::starts_with_magic(bytes.data(), control::kMagic.size())) {
      handshake.finish();
      if (!foreign_) {
        log_.warn("stranger", "connection from " + peer + " is not a testio client; closed");
        co_return;
      }
      co_await serve_foreign(std::move(socket), {bytes[0], bytes[1], bytes[2], bytes[3]}, handshake_limit);
      co_return;
    }
    co_await control::within(
        asio::async_read(socket, asio::buffer(bytes.data() + control::kMagic.size(),
                                              bytes.size() - control::kMagic.size()),
                         asio::use_awaitable),
        handshake_limit, "waiting for the connection preamble");
    handshake.finish();
    control::DecodedPreamble decoded = control::decode_preamble(bytes);
    switch (decoded.status) {
      case control::DecodedPreamble::Status::ok:
        break;
      case control::DecodedPreamble::Status::bad_version: {
        std::string message = "the client speaks testio protocol version " +
                              std::to_string(decoded.preamble.version) + " and this server version " +
                              std::to_string(control::kProtocolVersion) + ": run the same testio release on both";
        util::log_warn("connection from {}: {}", peer, message);
        reporter_.refused(metrics::Refusal::version);
        control::ControlChannel control(std::move(socket), config_.limits.max_frame);
        co_await control::send_error(control, message, "version");
        co_return;
      }
      case control::DecodedPreamble::Status::bad_kind:
      case control::DecodedPreamble::Status::not_testio:
        log_.warn("preamble", "connection from " + peer + " sent a malformed preamble; closed");
        co_return;
    }
    if (decoded.preamble.kind == control::ConnectionKind::data)
      handle_data(std::move(socket), decoded.preamble);
    else
      co_await handle_control(std::move(socket));
  } catch (const std::exception& error) {
    if (handshake.evicted()) co_return;  // told and logged at the door
    handshake.finish();
    log_.warn("handshake", "connection from " + peer + ": " + error.what());
  }
}

void Server::handle_data(tcp::socket socket, const control::Preamble& preamble) {
  const std::string peer = peer_of(socket);
  auto test = tests_.find(preamble.test_id);
  if (test == tests_.end()) {
    log_.warn("unknown test", "data connection from " + peer + " names an unknown test; closed");
    return;
  }
  std::string refusal = test->second->attach(preamble.stream, std::move(socket));
  if (!refusal.empty()) log_.warn("data refused", "data connection from " + peer + ": " + refusal + "; closed");
}

int run_server(const config::Config& config, metrics::ServerMetrics& metrics, ForeignClients* foreign) {
  asio::io_context io(1);
  Server server(io, config, metrics, foreign);
  std::optional<metrics::HttpListener> endpoint;
  if (!config.metrics_listen.empty()) open_metrics_endpoint(io, config.metrics_listen, server, endpoint);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& error, int signal) {
    if (error) return;
    util::log_info("{}: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM");
    server.stop();
    if (endpoint) endpoint->stop();
    io.stop();
  });
  // -1 --idle-timeout N: a one-off server that no test reaches within N seconds exits (0), as
  // iperf3's does; without -1 each test ends by --stall-timeout, and nothing needs restarting.
  asio::steady_timer idle(io);
  if (config.one_off && config.idle_timeout_s > 0) {
    idle.expires_after(std::chrono::duration_cast<asio::steady_timer::duration>(
        std::chrono::duration<double>(config.idle_timeout_s)));
    idle.async_wait([&](const asio::error_code& error) {
      if (error || metrics.tests_begun() > 0) return;
      util::log_info("no test within {} s (--idle-timeout): exiting", config.idle_timeout_s);
      signals.cancel();
      server.stop();
      if (endpoint) endpoint->stop();
      io.stop();
    });
  }
  asio::co_spawn(io, server.serve(), [&](std::exception_ptr) {
    idle.cancel();
    signals.cancel();
    if (endpoint) endpoint->stop();  // -1: the one test is over
  });
  io.run();
  return server.exit_code();
}

// A testio client's test on the server, from its control connection: the request and its key,
// the caps it must keep (per test, per address, across the server), its wait in the queue when
// every slot is taken, and the test through its lifecycle (ServerTest) with its own report.

using lifecycle::check_descriptors;
using lifecycle::ServerPeer;
using lifecycle::TestPart;
using lifecycle::TestParts;
namespace {

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
  util::log_info("{} waits: {} ahead", admission.who, tests_text(place.ahead()));
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
    util::log_warn("test from {} ended: {}", peer, failure);
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
  util::log_info("{}: {}", admission.who, workloads::describe(admission.request.spec));
  if (std::string refusal = cap_refusal(admission.peer, admission.connections); !refusal.empty()) {
    util::log_info("refused {}: {}", admission.who, refusal);
    reporter_.refused(metrics::Refusal::cap);
    co_await control::send_error(control, refusal, "refused");
    co_return std::nullopt;
  }
  admission.counted = std::make_unique<PeerTests>(*this, admission.peer);
  std::string refusal = co_await take_slot(control, admission);
  if (!refusal.empty()) {
    util::log_info("refused {}: {}", admission.who, refusal);
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
    util::log_info("{} finished", admission->who);
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
    util::log_warn("{} ended: {}", admission->who, ended);
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

namespace {

tcp::endpoint listen_endpoint(const config::Config& config) {
  if (!config.bind_address.empty()) {
    asio::error_code ec;
    asio::ip::address address = asio::ip::make_address(config.bind_address, ec);
    if (ec) throw std::runtime_error("-B '" + config.bind_address + "' is not an IP address");
    return {address, config.port};
  }
  return {config.family == config::AddressFamily::v4 ? tcp::v4() : tcp::v6(), config.port};
}

// A plain TCP listener, or with --mptcp an MPTCP one: it still accepts plain TCP clients, whose
// connections the kernel hands over as plain TCP sockets.
void open_listener(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, const config::Config& config) {
  if (config.mptcp)
    acceptor.assign(endpoint.protocol(), net::open_mptcp_socket(endpoint.protocol().family()));
  else
    acceptor.open(endpoint.protocol());
}

}  // namespace

tcp::acceptor open_acceptor(asio::io_context& io, const config::Config& config) {
  tcp::endpoint endpoint = listen_endpoint(config);
  tcp::acceptor acceptor(io);
  try {
    open_listener(acceptor, endpoint, config);
  } catch (const std::exception&) {
    if (!config.bind_address.empty() || config.family != config::AddressFamily::any) throw;
    endpoint = tcp::endpoint(tcp::v4(), config.port);  // a host without IPv6
    open_listener(acceptor, endpoint, config);
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  if (!config.bind_device.empty()) net::bind_to_device(acceptor.native_handle(), config.bind_device);
  // --snd-timeout: every accepted connection, control and data, inherits the listener's.
  if (config.snd_timeout_ms) net::set_user_timeout(acceptor.native_handle(), config.snd_timeout_ms);
  // Dual-stack unless -6 asked for IPv6 only.
  if (endpoint.protocol() == tcp::v6() && config.bind_address.empty())
    acceptor.set_option(asio::ip::v6_only(config.family == config::AddressFamily::v6));
  try {
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::system_error& error) {
    throw std::runtime_error("cannot listen on " + control::endpoint_text(endpoint) + ": " +
                             error.code().message());
  }
  return acceptor;
}

}  // namespace testio::server
