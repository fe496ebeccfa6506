#include "server/server.hpp"

#include "protocols/testio/server_peer.hpp"

#include "stats/peer_clock.hpp"

#include <malloc.h>

#include <array>
#include <chrono>
#include <csignal>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include "protocols/testio/auth.hpp"
#include "server/listen.hpp"
#include "protocols/testio/channel.hpp"
#include "protocols/testio/framing.hpp"
#include "engines/bulk_streams.hpp"
#include "metrics/http_listener.hpp"
#include "lifecycle/start.hpp"
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
      spdlog::warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
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
  spdlog::info("{}", foreign_ ? foreign_->listening(endpoint) : "listening on " + endpoint);
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
  const std::string refusal = std::to_string(held) + " connections from this address are in their handshake "
                              "(--max-pending-per-peer " + std::to_string(limits.max_pending_per_peer) +
                              "); the oldest is closed";
  log_.warn("door", "closed the oldest of " + std::to_string(held) + " handshakes from " +
                        control::address_text(peer.address()) + " for a newer one (--max-pending-per-peer " +
                        std::to_string(limits.max_pending_per_peer) + ")");
  if (tcp::socket* oldest = handshakes_.evict_oldest(peer.address())) {
    answer_at_the_door(*oldest, refusal);
    asio::error_code ignored;
    oldest->close(ignored);  // its coroutine's read ends with operation_aborted
  }
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
        spdlog::warn("connection from {}: {}", peer, message);
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
    spdlog::info("{}: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM");
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
      spdlog::info("no test within {} s (--idle-timeout): exiting", config.idle_timeout_s);
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

}  // namespace testio::server
