#include "server/server.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>

#include "metrics/http_listener.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/deadline.hpp"
#include "net/mptcp.hpp"
#include "net/socket_options.hpp"
#include "protocols/testio/protocol.hpp"
#include "server/listen.hpp"
#include "util/log.hpp"

namespace testio::server {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

std::string peer_of(const tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : lifecycle::endpoint_text(endpoint);
}

}  // namespace

// The listening socket, and the UDP port of the same number beside it.
struct Server::BoundPort {
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::ip::udp::socket> udp;  // null: the server takes no test that needs UDP
};

// -p 0 lets the kernel pick a free TCP port, whose UDP twin another program's socket may hold (a
// client's ephemeral UDP port, say); the server then picks again, keeping the ports it turned
// down until it has one, so that its UDP tests reach it. A port named with -p is taken as it is.
Server::BoundPort Server::bind_port(asio::io_context& io, const config::Config& config) {
  std::vector<std::unique_ptr<tcp::acceptor>> turned_down;  // open, so the kernel does not pick them again
  constexpr int kPortPicks = 32;
  for (int pick = 1;; ++pick) {
    auto acceptor = std::make_unique<tcp::acceptor>(open_acceptor(io, config));
    try {
      auto udp = open_udp_twin(io, acceptor->local_endpoint(), config);
      return {std::move(acceptor), std::move(udp)};
    } catch (const std::exception& error) {
      const auto* refused = dynamic_cast<const std::system_error*>(&error);
      const bool taken = refused && refused->code() == asio::error::address_in_use;
      if (taken && config.port == 0 && pick < kPortPicks) {
        turned_down.push_back(std::move(acceptor));
        continue;
      }
      util::log_warn("UDP port {} cannot be opened ({}): this server takes no UDP tests", acceptor->local_endpoint().port(),
                     error.what());
      return {std::move(acceptor), nullptr};
    }
  }
}

Server::Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
               ForeignClients* foreign)
    : Server(io, config, metrics, foreign, bind_port(io, config)) {}

Server::Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
               ForeignClients* foreign, BoundPort port)
    : io_(io),
      config_(config),
      reporter_(metrics),
      acceptor_(std::move(port.acceptor)),
      allowed_(net::AccessList::parse(config.allow)),
      foreign_(foreign),
      slots_(config.limits.max_tests, config.limits.max_server_connections, config.limits.queue),
      log_(io.get_executor()),
      door_({io, config, metrics, slots_, log_,
             [this](int exit_code) {
               exit_code_ = exit_code;
               stop();
             },
             [this] { return udp_door_.port(); }}),
      udp_door_(std::move(port.udp), allowed_, [this](std::uint64_t id) { return door_.find(id); }, foreign, log_) {}

Server::~Server() = default;

std::uint16_t Server::port() const { return acceptor_->local_endpoint().port(); }

void Server::stop() noexcept {
  asio::error_code ignored;
  slots_.close();  // the tests waiting are told, and none starts from here on
  acceptor_->close(ignored);
  udp_door_.close();
  if (foreign_) foreign_->stop();
}

asio::awaitable<void> Server::serve() {
  const std::string endpoint = lifecycle::endpoint_text(acceptor_->local_endpoint());
  util::log_info("{}", foreign_ ? foreign_->listening(endpoint) : "listening on " + endpoint);
  // A peer whose every connection is a whole test takes one connection with -1.
  const bool one_connection = config_.one_off && foreign_ && foreign_->takes_every_connection();
  if (udp_door_.open()) asio::co_spawn(io_, udp_door_.serve(), asio::detached);
  for (;;) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_->async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !acceptor_->is_open()) co_return;
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
      log_.warn("allow", "refused a connection from " + lifecycle::endpoint_text(peer) + ": not in --allow");
      continue;  // the socket closes as it goes out of scope
    }
    if (!admit_at_the_door(socket, peer)) continue;
    if (one_connection) {  // no other is accepted; the server stops once it is served
      acceptor_->close(error);
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
    log_.warn("door", "refused a connection from " + lifecycle::endpoint_text(peer) + ": " + refusal);
    reporter_.refused(metrics::Refusal::handshakes);
    answer_at_the_door(socket, refusal);
    return false;
  }
  // A peer running a test here may open as many as its test has connections, and a few more.
  const std::uint64_t allowance = limits.max_pending_per_peer + door_.data_connections_of(peer.address());
  const std::uint32_t held = handshakes_.held_by(peer.address());
  if (held < allowance) return true;
  tcp::socket* oldest_idle = handshakes_.evict_oldest_idle(peer.address());
  if (!oldest_idle) return true;  // every one has its bytes in, and finishes as soon as it is read
  const std::string limit = "--max-pending-per-peer " + std::to_string(limits.max_pending_per_peer);
  log_.warn("door", "closed the oldest idle one of " + std::to_string(held) + " handshakes from " +
                        lifecycle::address_text(peer.address()) + " for a newer one (" + limit + ")");
  answer_at_the_door(*oldest_idle, std::to_string(held) + " connections from this address are in their handshake (" +
                                       limit + "); the oldest idle one is closed");
  asio::error_code ignored;
  oldest_idle->close(ignored);  // its coroutine's read ends with operation_aborted
  return true;
}

void Server::answer_at_the_door(tcp::socket& socket, const std::string& refusal) noexcept {
  // One short frame, written without waiting (it fits any empty socket buffer), then the close:
  // a refused connection costs this server nothing more.
  const std::string frame = control::error_frame(refusal, "refused");
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
    co_await lifecycle::within(
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
    co_await lifecycle::within(
        asio::async_read(socket, asio::buffer(bytes.data() + control::kMagic.size(),
                                              bytes.size() - control::kMagic.size()),
                         asio::use_awaitable),
        handshake_limit, "waiting for the connection preamble");
    handshake.finish();
    // Named, not a temporary in the co_await: GCC 12 destroys such a temporary twice.
    const control::DecodedPreamble decoded = control::decode_preamble(bytes);
    co_await door_.enter(std::move(socket), decoded, peer);
  } catch (const std::exception& error) {
    if (handshake.evicted()) co_return;  // told and logged at the door
    handshake.finish();
    log_.warn("handshake", "connection from " + peer + ": " + error.what());
  }
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
    throw std::runtime_error("cannot listen on " + lifecycle::endpoint_text(endpoint) + ": " +
                             error.code().message());
  }
  return acceptor;
}

// --metrics: what a scrape reads, and the endpoint that serves it.
std::string Server::metrics_text() const {
  metrics::ServerState state{slots_.taken(), slots_.waiting(), slots_.busy_refusals()};
  auto add_live = [&state](std::pair<std::uint64_t, std::uint64_t> received_and_sent) {
    state.live_received_bytes += received_and_sent.first;
    state.live_sent_bytes += received_and_sent.second;
  };
  add_live(door_.bytes_so_far());                    // testio's running tests
  if (foreign_) add_live(foreign_->bytes_so_far());  // iperf3's
  return reporter_.exposition(state);
}

void open_metrics_endpoint(asio::io_context& io, const std::string& address, Server& server,
                           std::optional<metrics::HttpListener>& endpoint) {
  endpoint.emplace(io, address, [&server](const metrics::HttpRequest& request) -> asio::awaitable<metrics::HttpResponse> {
    if (request.path == "/metrics") co_return metrics::HttpResponse{200, metrics::kContentType, server.metrics_text()};
    co_return metrics::plain_response(404, request.path + " is not served here; try /metrics");
  }, "metrics");
  util::log_info("metrics on port {} ({}/metrics)", endpoint->port(), address);
  asio::co_spawn(io, endpoint->serve(), asio::detached);
}

}  // namespace testio::server
