#include "engine/server.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <random>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "control/channel.hpp"
#include "control/framing.hpp"

namespace testio::engine {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr auto kPreambleLimit = 5s;   // a connection that says nothing is dropped after this
constexpr auto kRequestLimit = 10s;

tcp::endpoint listen_endpoint(const config::Config& config) {
  if (!config.bind_address.empty()) {
    asio::error_code ec;
    asio::ip::address address = asio::ip::make_address(config.bind_address, ec);
    if (ec) throw std::runtime_error("-B '" + config.bind_address + "' is not an IP address");
    return {address, config.port};
  }
  return {config.family == config::AddressFamily::v4 ? tcp::v4() : tcp::v6(), config.port};
}

tcp::acceptor open_acceptor(asio::io_context& io, const config::Config& config) {
  tcp::endpoint endpoint = listen_endpoint(config);
  tcp::acceptor acceptor(io);
  try {
    acceptor.open(endpoint.protocol());
  } catch (const std::system_error&) {
    if (!config.bind_address.empty() || config.family != config::AddressFamily::any) throw;
    endpoint = tcp::endpoint(tcp::v4(), config.port);  // a host without IPv6
    acceptor.open(endpoint.protocol());
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true));
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

std::string peer_of(const tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : control::endpoint_text(endpoint);
}

// Best effort: the peer may already be gone, and the reason is logged on our side anyway.
asio::awaitable<void> send_error(control::ControlChannel& control, const std::string& message,
                                 const std::string& code) {
  try {
    co_await control.write(control::error_message(message, code));
  } catch (const std::exception&) {
  }
}

}  // namespace

Server::Server(asio::io_context& io, const config::Config& config, report::Reporter& reporter)
    : io_(io), config_(config), reporter_(reporter), acceptor_(open_acceptor(io, config)) {}

void Server::stop() noexcept {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

std::uint64_t Server::new_test_id() {
  static std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t id = 0;
  while (id == 0) id = generator();
  return id;
}

asio::awaitable<void> Server::serve() {
  spdlog::info("listening on {}", control::endpoint_text(acceptor_.local_endpoint()));
  for (;;) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (error) {
      // EMFILE and friends: say so, back off a moment, keep serving.
      spdlog::warn("accept failed: {}", error.message());
      asio::steady_timer pause(io_, 100ms);
      co_await pause.async_wait(asio::use_awaitable);
      continue;
    }
    asio::co_spawn(io_, handle_connection(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> Server::handle_connection(tcp::socket socket) {
  const std::string peer = peer_of(socket);
  try {
    control::PreambleBytes bytes{};
    // The magic first, so a client speaking something else is told apart without waiting for
    // bytes it will never send.
    co_await control::within(
        asio::async_read(socket, asio::buffer(bytes.data(), control::kMagic.size()), asio::use_awaitable),
        kPreambleLimit, "waiting for the connection preamble");
    if (!control::starts_with_magic(bytes.data(), control::kMagic.size())) {
      spdlog::warn("connection from {} is not a testio client; closed", peer);
      co_return;
    }
    co_await control::within(
        asio::async_read(socket, asio::buffer(bytes.data() + control::kMagic.size(),
                                              bytes.size() - control::kMagic.size()),
                         asio::use_awaitable),
        kPreambleLimit, "waiting for the connection preamble");
    control::DecodedPreamble decoded = control::decode_preamble(bytes);
    switch (decoded.status) {
      case control::DecodedPreamble::Status::ok:
        break;
      case control::DecodedPreamble::Status::bad_version: {
        std::string message = "protocol version " + std::to_string(decoded.preamble.version) +
                              " is not supported; this server speaks version " +
                              std::to_string(control::kProtocolVersion);
        spdlog::warn("connection from {}: {}", peer, message);
        control::ControlChannel control(std::move(socket), config_.limits.max_frame);
        co_await send_error(control, message, "version");
        co_return;
      }
      case control::DecodedPreamble::Status::bad_kind:
      case control::DecodedPreamble::Status::not_testio:
        spdlog::warn("connection from {} sent a malformed preamble; closed", peer);
        co_return;
    }
    if (decoded.preamble.kind == control::ConnectionKind::data)
      handle_data(std::move(socket), decoded.preamble);
    else
      co_await handle_control(std::move(socket));
  } catch (const std::exception& error) {
    spdlog::warn("connection from {}: {}", peer, error.what());
  }
}

void Server::handle_data(tcp::socket socket, const control::Preamble& preamble) {
  const std::string peer = peer_of(socket);
  if (!active_test_ || active_test_->id() != preamble.test_id) {
    spdlog::warn("data connection from {} names an unknown test; closed", peer);
    return;
  }
  std::string refusal = active_test_->attach(preamble.stream, std::move(socket));
  if (!refusal.empty()) spdlog::warn("data connection from {}: {}; closed", peer, refusal);
}

asio::awaitable<void> Server::handle_control(tcp::socket socket) {
  control::ControlChannel control(std::move(socket), config_.limits.max_frame);
  const std::string peer = control.peer();
  if (test_slot_taken_) {
    spdlog::info("refused a test from {}: busy", peer);
    co_await send_error(control, "the server is busy running a test; try again later", "busy");
    co_return;
  }
  // Taken before the first co_await below, so a second client cannot slip in meanwhile.
  test_slot_taken_ = true;
  bool succeeded = false;
  std::string ended;    // why the test ended early, for the log and the report
  std::string failure;  // sent to the client after the catch: no co_await inside a handler
  try {
    control::TestRequest request;
    try {
      request = control::parse_test_request(co_await control.read(kRequestLimit), config_.limits);
    } catch (const control::ProtocolError& error) {
      throw control::ProtocolError(std::string("invalid test request: ") + error.what());
    }
    spdlog::info("test from {}: {} connections, {}", peer, request.connections,
                 request.total_bytes ? std::to_string(request.total_bytes) + " bytes"
                                     : std::to_string(request.duration_s) + " s");
    active_test_ = std::make_shared<ServerTest>(io_.get_executor(), new_test_id(), request);
    succeeded = co_await run_server_test(control, *active_test_, reporter_);
    spdlog::info("test from {} finished", peer);
  } catch (const control::PeerError& error) {
    ended = std::string("the client ended the test: ") + error.what();
  } catch (const std::system_error& error) {
    ended = "the client went away (" + error.code().message() + ")";
  } catch (const std::exception& error) {
    ended = failure = error.what();
  }
  if (!ended.empty()) {
    spdlog::warn("test from {} ended: {}", peer, ended);
    reporter_.error(ended);
  }
  if (!failure.empty()) co_await send_error(control, failure, "failed");
  active_test_.reset();
  test_slot_taken_ = false;
  if (config_.one_off) {
    exit_code_ = succeeded ? 0 : 1;
    stop();
  }
}

int run_server(const config::Config& config, report::Reporter& reporter) {
  asio::io_context io(1);
  Server server(io, config, reporter);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& error, int signal) {
    if (error) return;
    spdlog::info("{}: stopping", signal == SIGINT ? "SIGINT" : "SIGTERM");
    server.stop();
    io.stop();
  });
  asio::co_spawn(io, server.serve(), [&](std::exception_ptr) { signals.cancel(); });
  io.run();
  return server.exit_code();
}

}  // namespace testio::engine
